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
