// Which IP addresses an outbound request (a webhook) may reach. Everything that is not the
// public internet is refused: private, loopback, link-local (cloud metadata at
// 169.254.169.254), unique-local, multicast, the unspecified address, documentation and
// benchmark ranges, and IPv6 forms that embed an IPv4 address (IPv4-mapped, NAT64, 6to4,
// Teredo), which could otherwise smuggle a private IPv4 address through an IPv6 literal.
import { BlockList, isIP } from 'node:net';

const RANGES: Array<[string, number, 'ipv4' | 'ipv6', string]> = [
  ['0.0.0.0', 8, 'ipv4', 'unspecified'],
  ['10.0.0.0', 8, 'ipv4', 'private'],
  ['100.64.0.0', 10, 'ipv4', 'private'], // carrier-grade NAT
  ['127.0.0.0', 8, 'ipv4', 'loopback'],
  ['169.254.0.0', 16, 'ipv4', 'link-local'],
  ['172.16.0.0', 12, 'ipv4', 'private'],
  ['192.0.0.0', 24, 'ipv4', 'reserved'],
  ['192.0.2.0', 24, 'ipv4', 'reserved'], // documentation
  ['192.88.99.0', 24, 'ipv4', 'reserved'], // 6to4 relay anycast
  ['192.168.0.0', 16, 'ipv4', 'private'],
  ['198.18.0.0', 15, 'ipv4', 'reserved'], // benchmarking
  ['198.51.100.0', 24, 'ipv4', 'reserved'],
  ['203.0.113.0', 24, 'ipv4', 'reserved'],
  ['224.0.0.0', 4, 'ipv4', 'multicast'],
  ['240.0.0.0', 4, 'ipv4', 'reserved'], // and the broadcast address
  ['::', 128, 'ipv6', 'unspecified'],
  ['::1', 128, 'ipv6', 'loopback'],
  ['::ffff:0:0', 96, 'ipv6', 'ipv4-mapped'],
  ['::', 96, 'ipv6', 'ipv4-compatible'],
  ['64:ff9b::', 96, 'ipv6', 'nat64'],
  ['64:ff9b:1::', 48, 'ipv6', 'nat64'],
  ['100::', 64, 'ipv6', 'reserved'], // discard
  ['2001::', 32, 'ipv6', 'teredo'],
  ['2001:db8::', 32, 'ipv6', 'reserved'], // documentation
  ['2002::', 16, 'ipv6', '6to4'],
  ['fc00::', 7, 'ipv6', 'unique-local'],
  ['fe80::', 10, 'ipv6', 'link-local'],
  ['fec0::', 10, 'ipv6', 'site-local'],
  ['ff00::', 8, 'ipv6', 'multicast'],
];

const lists = RANGES.map(([net, prefix, type, label]) => {
  const list = new BlockList();
  list.addSubnet(net, prefix, type);
  return { list, type, label };
});

/**
 * Why an address may not be reached (`loopback`, `private`, `link-local`, …), or null for a
 * public address. Anything that is not an IP address at all is `invalid`.
 */
export function refusedAddress(address: string): string | null {
  const ip = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(ip);
  if (family === 0) return 'invalid';
  const type = family === 4 ? 'ipv4' : 'ipv6';
  // Checked most specific first where ranges nest (::1 and ::ffff:0:0/96 inside ::/96).
  for (const { list, type: t, label } of lists) {
    if (t === type && list.check(ip, type)) return label;
  }
  return null;
}

/** Host names that are local by definition (RFC 6761), refused without asking DNS. */
export function isLocalName(host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost') || h === 'localhost.localdomain';
}
