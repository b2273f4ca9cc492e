// A software WebAuthn authenticator for the tests: a P-256 key pair per credential made with
// node:crypto, "none" attestation objects encoded with the project's CBOR library, and assertion
// signatures over authenticatorData || SHA-256(clientDataJSON), as a platform authenticator makes
// them. The signature counter grows by one per assertion unless told otherwise (a clone).
import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';
import cbor from 'cbor';

const b64u = (b: Buffer | Uint8Array) => Buffer.from(b).toString('base64url');
const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest();

export interface SoftCredential {
  id: string;
  rawId: Buffer;
  privateKey: KeyObject;
  userHandle: string | null;
  counter: number;
}

export class SoftAuthenticator {
  readonly credentials: SoftCredential[] = [];
  constructor(readonly origin: string) {}

  get rpId(): string {
    return new URL(this.origin).hostname;
  }

  #clientData(type: string, challenge: string, origin = this.origin): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
  }

  #authData(rpId: string, flags: number, counter: number, attested?: Buffer): Buffer {
    const c = Buffer.alloc(4);
    c.writeUInt32BE(counter >>> 0);
    return Buffer.concat([sha256(rpId), Buffer.from([flags]), c, ...(attested ? [attested] : [])]);
  }

  /** navigator.credentials.create: a RegistrationResponseJSON for these creation options. */
  create(options: any, opts: { origin?: string; rpId?: string } = {}): { json: any; credential: SoftCredential } {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const cose = new Map<number, unknown>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, Buffer.from(jwk.x!, 'base64url')],
      [-3, Buffer.from(jwk.y!, 'base64url')],
    ]);
    const rawId = randomBytes(32);
    const len = Buffer.alloc(2);
    len.writeUInt16BE(rawId.length);
    const attested = Buffer.concat([Buffer.alloc(16), len, rawId, cbor.encode(cose)]);
    const authData = this.#authData(opts.rpId ?? options.rp.id, 0x01 | 0x04 | 0x40, 0, attested);
    const attestationObject = cbor.encode({ fmt: 'none', attStmt: {}, authData });
    const clientDataJSON = this.#clientData('webauthn.create', options.challenge, opts.origin);
    const credential: SoftCredential = {
      id: b64u(rawId),
      rawId,
      privateKey,
      userHandle: options.user?.id ?? null,
      counter: 0,
    };
    this.credentials.push(credential);
    return {
      credential,
      json: {
        id: credential.id,
        rawId: credential.id,
        type: 'public-key',
        clientExtensionResults: {},
        authenticatorAttachment: 'platform',
        response: {
          clientDataJSON: b64u(clientDataJSON),
          attestationObject: b64u(attestationObject),
          transports: ['internal'],
        },
      },
    };
  }

  /** navigator.credentials.get: an AuthenticationResponseJSON for these request options. */
  get(
    options: any,
    opts: { credential?: SoftCredential; counter?: number; origin?: string; privateKey?: KeyObject } = {},
  ): any {
    const allowed: string[] = (options.allowCredentials ?? []).map((c: any) => c.id);
    const cred =
      opts.credential ?? this.credentials.find((c) => allowed.length === 0 || allowed.includes(c.id)) ?? null;
    if (!cred) throw new Error('no credential for these options');
    cred.counter = opts.counter ?? cred.counter + 1;
    const authData = this.#authData(options.rpId ?? this.rpId, 0x01 | 0x04, cred.counter);
    const clientDataJSON = this.#clientData('webauthn.get', options.challenge, opts.origin);
    const signature = sign(
      'sha256',
      Buffer.concat([authData, sha256(clientDataJSON)]),
      opts.privateKey ?? cred.privateKey,
    );
    return {
      id: cred.id,
      rawId: cred.id,
      type: 'public-key',
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
      response: {
        clientDataJSON: b64u(clientDataJSON),
        authenticatorData: b64u(authData),
        signature: b64u(signature),
        ...(cred.userHandle ? { userHandle: cred.userHandle } : {}),
      },
    };
  }
}
