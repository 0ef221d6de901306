// Lambda's synchronous invoke payload limit, which binds before API Gateway's 10 MB: 6 MB for the
// request event and for the result alike, each as JSON, so a body counts escaped inside it.

/** The most a synchronous invoke's event or result may weigh. */
export const LAMBDA_PAYLOAD_BYTES = 6 * 1024 * 1024;

/**
 * The most a request body may weigh inside its event: the rest of the event (headers, at most
 * ~10 KB through API Gateway, and the request context) is kept room for. A larger event fails on
 * AWS before the function runs; the handler refuses such a body itself (413), so the local server,
 * which hands the handler the same event, answers what AWS would not take the same way every time.
 */
export const LAMBDA_EVENT_BODY_BYTES = LAMBDA_PAYLOAD_BYTES - 64 * 1024;

/** A text's weight inside an event's or a result's JSON: escaped (quotes, backslashes, control characters), in UTF-8. */
export const escapedBytes = (text: string): number => Buffer.byteLength(JSON.stringify(text));

/** Escaping at most sextuples a text (a control character becomes 6 characters): only a text that long can be over `limit`. */
export const mayEscapeOver = (text: string, limit: number): boolean => text.length * 6 > limit;

/**
 * The most a Lambda function may answer a synchronous invoke: 6 MB for its whole result as JSON,
 * the body escaped inside it (API Gateway would take 10 MB; Lambda's limit binds first). Room is
 * kept for the status and headers. An answer over it fails on AWS as an opaque 502, so the group
 * handler gzips it whatever its size when accepted, else refuses it as a 406 saying how to ask for it.
 */
export const LAMBDA_ANSWER_BYTES = LAMBDA_PAYLOAD_BYTES - 16 * 1024;

/** A text measured by gzippedAnswerBytes, and its gzip: the answer that follows takes it rather than compress again. */
let measured: { text: string; gzipped: Buffer } | undefined;

// zlib is loaded by the first answer gzipped, not by the cold start (≈ 5% of it; most groups' answers are small).
const compress = (text: string) => process.getBuiltinModule('node:zlib').gzipSync(text, { level: 6 });

/** A text as an answer sends it gzipped (level 6); the text gzippedAnswerBytes measured last is not compressed again. */
export function gzipAnswer(text: string): Buffer {
  if (measured?.text === text) {
    const { gzipped } = measured;
    measured = undefined;
    return gzipped;
  }
  return compress(text);
}

/**
 * Only a text this long can weigh over `limit` gzipped and base64-encoded: UTF-8 at most triples it, deflate's stored
 * blocks add 5 bytes in 65,535 and gzip 18, base64 makes 4 of 3. A shorter one need not be measured (nor compressed).
 */
export const mayGzipOver = (text: string, limit: number): boolean => text.length * 4.01 + 64 > limit;

/** What a text weighs as a gzipped answer's body (base64-encoded); its gzip is kept for gzipAnswer of that text. */
export function gzippedAnswerBytes(text: string): number {
  const gzipped = compress(text);
  measured = { text, gzipped };
  return Math.ceil(gzipped.length / 3) * 4;
}
