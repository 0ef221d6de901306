// What a message may quote of another service's words (shared/http/redact.ts): our secrets, whole, escaped or in
// part, and credential shapes are cut; the rest of the words, which tell an operator what went wrong, are kept.
import { describe, expect, it } from 'vitest';
import { redactCredentials } from '../../shared/http/redact.js';

const KEY = 'fh-live-7Qx2mZ0pL9sK4vB8nR3t';

describe('redactCredentials', () => {
  it('cuts a secret whole, JSON- or URL-escaped', () => {
    const secret = 'p@ss "word"/9';
    expect(redactCredentials(`a ${secret} b ${JSON.stringify(secret).slice(1, -1)} c ${encodeURIComponent(secret)}`, [secret])).toBe(
      'a [redacted] b [redacted] c [redacted]',
    );
  });

  it('cuts a run holding a piece of a secret of 8 characters or more: a masked or cut quote', () => {
    expect(redactCredentials(`key ${KEY.slice(0, 10)}... is not valid`, [KEY])).toBe('key [redacted] is not valid');
    expect(redactCredentials(`key ${KEY.slice(0, 9)}****${KEY.slice(-4)} is not valid`, [KEY])).toBe('key [redacted] is not valid');
    // Seven characters of it are no quote: ordinary words survive.
    expect(redactCredentials(`key ${KEY.slice(0, 7)} is not valid`, [KEY])).toBe(`key ${KEY.slice(0, 7)} is not valid`);
  });

  it("cuts credential shapes whoever's they are", () => {
    expect(redactCredentials('Credential=AKIAABCDEFGHIJKLMNOP/20261206/eu-west-1/bedrock/aws4_request, Signature=00ff')).toBe(
      'Credential=[redacted], Signature=[redacted]',
    );
    expect(redactCredentials('X-Amz-Security-Token: IQoJb3JpZ2luX2Vj and ASIAABCDEFGHIJKLMNOP')).toBe('X-Amz-Security-Token: [redacted] and [redacted]');
    expect(redactCredentials('Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.x and Basic dXNlcjpwYXNz')).toBe(
      'Authorization: Bearer [redacted] and Basic [redacted]',
    );
    expect(redactCredentials('keys sk-proj-abc123XYZ0987654, gsk_abcdef1234567890 and xai-0123456789abcdef')).toBe(
      'keys [redacted], [redacted] and [redacted]',
    );
    // A session token quoted as JSON (a proxy echoing the request's headers), and by its start wherever it is.
    expect(redactCredentials('{"X-Amz-Security-Token":"FQoGZXIvYXdzEXAMPLE","Authorization":"x"}')).toBe(
      '{"X-Amz-Security-Token":"[redacted]","Authorization":"x"}',
    );
    expect(redactCredentials('token IQoJb3JpZ2luX2VjEXAMPLEtokenValue== expired')).toBe('token [redacted] expired');
  });

  it('keeps the words that only name a credential', () => {
    for (const said of [
      '401 Unauthorized: basic authentication required',
      'Bearer authentication failed for this route',
      'signature: mismatch, credential: expired',
      'task-skip: sk-learn failed',
    ])
      expect(redactCredentials(said)).toBe(said);
  });

  it('looks at a bounded start of a text: a 8 MB run in one piece (no stack overflow), cut to what callers quote', () => {
    const said = redactCredentials(`Invalid request: ${'A'.repeat(8_000_000)}`, [KEY]);
    expect(said.startsWith('Invalid request: AAAA')).toBe(true);
    expect(said.length).toBe(64 * 1024);
  });

  it('keeps what tells an operator what went wrong', () => {
    const said = 'The model returned the following errors: prompt is too long (request 3f2c9a1e-5b7d-4c1a-9e2f-1a2b3c4d5e6f)';
    expect(redactCredentials(said, [KEY, undefined, ''])).toBe(said);
  });
});
