// The DynamoDB client's base64 decoder (shared/db/client.ts): Node's decoder without
// the SDK's per-character regular expression, accepting exactly what the SDK's
// decoder accepts and decoding it to the same bytes.
import { fromBase64 } from '@smithy/core/serde';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { base64Decoder } from '../../shared/db/client.js';

const outcome = (decode: (input: string) => Uint8Array, input: string) => {
  try {
    return Buffer.from(decode(input)).toString('hex');
  } catch {
    return 'refused';
  }
};

describe('base64Decoder', () => {
  it('decodes any bytes DynamoDB encodes, at any length', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 3000 }), (bytes) => {
        expect(Buffer.from(base64Decoder(Buffer.from(bytes).toString('base64'))).equals(Buffer.from(bytes))).toBe(true);
      }),
    );
  });

  it('decodes into a scratch buffer large enough, and into a new one when it is not', () => {
    const scratch = Buffer.alloc(64, 0xee);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), (bytes) => {
        const decoded = base64Decoder(Buffer.from(bytes).toString('base64'), scratch);
        expect(Buffer.from(decoded).equals(Buffer.from(bytes))).toBe(true);
        // A view of the scratch while it fits; never bytes of the scratch beyond it.
        expect(decoded.buffer === scratch.buffer).toBe(bytes.length <= scratch.length);
      }),
    );
  });

  it("accepts and refuses exactly what the SDK's decoder does", () => {
    const alphabet = fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_ !\n.'.split(''));
    fc.assert(
      fc.property(
        fc.array(alphabet, { maxLength: 24 }).map((chars) => chars.join('')),
        (input) => {
          expect(outcome(base64Decoder, input)).toBe(outcome(fromBase64, input));
          expect(outcome((text) => base64Decoder(text, Buffer.alloc(32, 0xee)), input)).toBe(outcome(fromBase64, input));
        },
      ),
      { numRuns: 20_000 },
    );
    for (const input of ['', 'QQ==', 'QUI=', 'QUJD', 'QQ==QQ==', 'Q===', '=QQQ', 'QU-D', 'QU_D', 'QUJ\nD', '====', 'QQ=='.repeat(20)]) {
      expect(outcome(base64Decoder, input)).toBe(outcome(fromBase64, input));
      expect(outcome((text) => base64Decoder(text, Buffer.alloc(32, 0xee)), input)).toBe(outcome(fromBase64, input));
    }
  });
});
