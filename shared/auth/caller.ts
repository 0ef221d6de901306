// Where a request came from, as recorded in the audit log.
export interface Caller {
  ip: string;
  userAgent: string;
}

export const callerOf = (req: { sourceIp: string; userAgent: string }): Caller => ({ ip: req.sourceIp, userAgent: req.userAgent });
