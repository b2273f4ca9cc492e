// Domains of public email providers: anyone can get an address there, so a whole such domain can
// never be a trusted website contact-form sender (interface.md, trusted_form_senders). The one
// list of them; the inbound side asks the same function.

/** Exact domains (and their subdomains). */
const DOMAINS = new Set([
  'gmail.com',
  'googlemail.com',
  'outlook.com',
  'hotmail.com',
  'live.com',
  'msn.com',
  'passport.com',
  'yahoo.com',
  'ymail.com',
  'rocketmail.com',
  'icloud.com',
  'me.com',
  'mac.com',
  'aol.com',
  'aim.com',
  'proton.me',
  'protonmail.com',
  'protonmail.ch',
  'pm.me',
  'tutanota.com',
  'tutanota.de',
  'tuta.io',
  'tuta.com',
  'fastmail.com',
  'fastmail.fm',
  'zoho.com',
  'zohomail.com',
  'mail.com',
  'email.com',
  'web.de',
  't-online.de',
  'freenet.de',
  'posteo.de',
  'mailbox.org',
  'orange.fr',
  'wanadoo.fr',
  'free.fr',
  'sfr.fr',
  'laposte.net',
  'libero.it',
  'virgilio.it',
  'seznam.cz',
  'wp.pl',
  'o2.pl',
  'interia.pl',
  'mail.ru',
  'bk.ru',
  'inbox.ru',
  'list.ru',
  'rambler.ru',
  'ya.ru',
  'qq.com',
  'foxmail.com',
  '163.com',
  '126.com',
  'sina.com',
  'naver.com',
  'daum.net',
  'hanmail.net',
  'rediffmail.com',
  'btinternet.com',
  'comcast.net',
  'verizon.net',
  'att.net',
  'sbcglobal.net',
  'cox.net',
  'charter.net',
  'earthlink.net',
  'bigpond.com',
  'optusnet.com.au',
  'shaw.ca',
  'rogers.com',
  'sympatico.ca',
  'hey.com',
  'duck.com',
  'hushmail.com',
  'inbox.com',
  'lycos.com',
]);

/** Brands present under many country domains: gmx.de, yahoo.co.uk, hotmail.fr, yandex.ru, … */
const BRANDS = new Set(['gmx', 'yahoo', 'hotmail', 'outlook', 'live', 'yandex', 'aol', 'windowslive', 'gmail']);
/** Second-level labels of country domains (co.uk, com.br, ne.jp, …). */
const SECOND_LEVEL = new Set(['co', 'com', 'net', 'org', 'ne', 'or', 'ac']);

/** Is this domain (lower-case, no trailing dot) a public email provider's? */
export function isPublicEmailDomain(domain: string): boolean {
  const d = domain.toLowerCase().replace(/\.$/, '');
  const labels = d.split('.');
  for (let i = 0; i < labels.length - 1; i++) {
    if (DOMAINS.has(labels.slice(i).join('.'))) return true;
  }
  const [brand, ...rest] = labels;
  if (brand && BRANDS.has(brand)) {
    // brand.<tld> or brand.<co|com|…>.<cc>: a country domain of the brand, not brand.example.com.
    if (rest.length === 1 && /^[a-z]{2,6}$/.test(rest[0]!)) return true;
    if (rest.length === 2 && SECOND_LEVEL.has(rest[0]!) && /^[a-z]{2}$/.test(rest[1]!)) return true;
  }
  return false;
}
