// Password hashing with scrypt (node:crypto), per-user salt, constant-time
// compare. Parameters follow OWASP (N = 2^17, r = 8, p = 1) and are stored in
// the hash, so they can be raised later without breaking existing hashes.
import { randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const LOG_N = 17;
const R = 8;
const P = 1;
const KEY_BYTES = 64;

function scrypt(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => scryptCallback(password, salt, KEY_BYTES, options, (error, key) => (error ? reject(error) : resolve(key))));
}

function optionsFor(logN: number, r: number, p: number): ScryptOptions {
  // scrypt needs 128 * N * r bytes; leave headroom over that.
  return { N: 2 ** logN, r, p, maxmem: 256 * 2 ** logN * r };
}

/** `scrypt$<logN>$<r>$<p>$<salt b64>$<key b64>` */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, optionsFor(LOG_N, R, P));
  return ['scrypt', LOG_N, R, P, salt.toString('base64'), key.toString('base64')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, logN, r, p, salt, key] = stored.split('$');
  if (scheme !== 'scrypt' || !logN || !r || !p || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64');
  const actual = await scrypt(password, Buffer.from(salt, 'base64'), optionsFor(Number(logN), Number(r), Number(p)));
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/**
 * A hash in the current parameters that no password matches (a key of zeros): checking a password
 * against it costs one scrypt, as a real account's check does. Built, not computed: computing it on
 * first use made a container's first login of an unknown user cost two scrypts, which timing shows.
 */
export const DECOY_HASH = ['scrypt', LOG_N, R, P, Buffer.alloc(16).toString('base64'), Buffer.alloc(KEY_BYTES).toString('base64')].join('$');
