// Typed errors thrown anywhere in the service. The one error middleware
// (shared/http/middleware.ts) turns each into an RFC 9457 problem+json reply.

export interface FieldError {
  loc: (string | number)[];
  msg: string;
  type: string;
}

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    detail: string,
    readonly headers: Record<string, string> = {},
    readonly extra: Record<string, unknown> = {},
  ) {
    super(detail);
    this.name = new.target.name;
  }
}

export class BadRequest extends HttpError {
  constructor(detail: string) {
    super(400, 'Bad Request', detail);
  }
}

export class Unauthorized extends HttpError {
  constructor(detail = 'A valid bearer token is required.') {
    super(401, 'Unauthorized', detail, { 'WWW-Authenticate': 'Bearer' });
  }
}

export class Forbidden extends HttpError {
  constructor(detail = 'Your role does not allow this action.') {
    super(403, 'Forbidden', detail);
  }
}

export class NotFound extends HttpError {
  constructor(detail = 'No such resource.') {
    super(404, 'Not Found', detail);
  }
}

export class Conflict extends HttpError {
  constructor(detail: string, extra: Record<string, unknown> = {}) {
    super(409, 'Conflict', detail, {}, extra);
  }
}

/** An If-Match the target cannot satisfy (a route that keeps no version to match): nothing was done. */
export class PreconditionFailed extends HttpError {
  constructor(detail: string) {
    super(412, 'Precondition Failed', detail);
  }
}

/** The answer exists only in a form the request did not accept (too large for Lambda uncompressed). */
export class NotAcceptable extends HttpError {
  constructor(detail: string) {
    super(406, 'Not Acceptable', detail);
  }
}

/** A body that is not declared JSON (Content-Type). */
export class UnsupportedMediaType extends HttpError {
  constructor(detail: string) {
    super(415, 'Unsupported Media Type', detail);
  }
}

export class PayloadTooLarge extends HttpError {
  constructor(detail: string) {
    super(413, 'Content Too Large', detail);
  }
}

export class ValidationFailed extends HttpError {
  constructor(
    detail: string,
    readonly errors: FieldError[] = [],
  ) {
    super(422, 'Unprocessable Content', detail, {}, errors.length ? { errors } : {});
  }
}

/** When to send the request again: whole seconds, at least one. */
const retryAfter = (seconds: number) => ({ 'Retry-After': String(Math.max(1, Math.ceil(seconds))) });

export class TooManyRequests extends HttpError {
  constructor(detail: string, retryAfterSeconds: number, extra: Record<string, unknown> = {}) {
    super(429, 'Too Many Requests', detail, retryAfter(retryAfterSeconds), extra);
  }
}

export class BadGateway extends HttpError {
  constructor(detail: string, extra: Record<string, unknown> = {}) {
    super(502, 'Bad Gateway', detail, {}, extra);
  }
}

export class ServiceUnavailable extends HttpError {
  /** With `retryAfterSeconds`, a passing overload: the client is told when to send the request again. */
  constructor(detail: string, retryAfterSeconds?: number) {
    super(503, 'Service Unavailable', detail, retryAfterSeconds === undefined ? {} : retryAfter(retryAfterSeconds));
  }
}
