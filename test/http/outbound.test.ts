// Reading another server's answer only up to what its caller takes (shared/http/outbound.ts):
// the bound is exact, and a refused body is left unread, whether it is a Node stream or a web one.
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { AnswerTooLarge, boundedBytes, boundedText, parseJson } from '../../shared/http/outbound.js';

const chunks = (...sizes: number[]) => sizes.map((size, i) => new Uint8Array(size).fill(65 + i));

describe('boundedBytes', () => {
  it('joins the chunks in order, up to exactly the bound', async () => {
    const bytes = await boundedBytes(Readable.from(chunks(3, 4, 3)), 10);
    expect(Buffer.from(bytes).toString()).toBe('AAABBBBCCC');
    expect(await boundedBytes(Readable.from([]), 0)).toEqual(new Uint8Array(0));
  });

  it('refuses one byte more and destroys a Node stream without reading on', async () => {
    let pulled = 0;
    const body = new Readable({
      read() {
        pulled++;
        this.push(new Uint8Array(4));
      },
    });
    await expect(boundedBytes(body, 10)).rejects.toBeInstanceOf(AnswerTooLarge);
    expect(body.destroyed).toBe(true);
    // The third chunk passed the bound; nothing much after it was asked for.
    expect(pulled).toBeLessThan(6);
  });

  it('cancels a web stream it refuses', async () => {
    let cancelled = false;
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new Uint8Array(4));
      },
      cancel() {
        cancelled = true;
      },
    });
    await expect(boundedBytes(body as unknown as AsyncIterable<Uint8Array>, 11)).rejects.toBeInstanceOf(AnswerTooLarge);
    expect(cancelled).toBe(true);
    expect(pulled).toBeLessThan(6);
  });
});

describe('boundedText', () => {
  it('reads a body within the bound as UTF-8, a character split across chunks included', async () => {
    const euro = Buffer.from('€');
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(euro.subarray(0, 1));
        controller.enqueue(euro.subarray(1));
        controller.close();
      },
    });
    expect(await boundedText(new Response(body), 3)).toBe('€');
  });

  it('refuses a declared length over the bound before reading any of it', async () => {
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new Uint8Array(1024));
      },
    });
    const response = new Response(body, { headers: { 'content-length': String(2 << 20) } });
    await expect(boundedText(response, 1 << 20)).rejects.toThrow('more than 1 MB');
    // A web stream pulls once to fill its queue as it starts; the body itself was never read.
    expect(pulled).toBeLessThanOrEqual(1);
  });
});

describe('parseJson', () => {
  it('answers JSON, undefined for anything else, and a lone surrogate escaped as U+FFFD', () => {
    expect(parseJson('{"a": [1, "b"]}')).toEqual({ a: [1, 'b'] });
    expect(parseJson('<html>Bad gateway</html>')).toBeUndefined();
    expect(parseJson(String.raw`{"text": "half \ud83d of a rocket, whole \ud83d\ude80"}`)).toEqual({ text: 'half \uFFFD of a rocket, whole \u{1F680}' });
  });
});
