// A local HTTP server speaking Amazon SES's Query protocol (form-encoded
// request, XML reply) for SendEmail, so the real @aws-sdk/client-ses is tested.
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedEmail {
  form: Record<string, string>;
  authorization: string;
}

export interface FakeSes {
  endpoint: string;
  received: ReceivedEmail[];
  /**
   * 'ok', 'reject' (400 MessageRejected), 'throttle' (400 Throttling), 'fail' (500 InternalFailure), 'hang' (no answer until closed) or 'flood'
   * (a 200 whose XML never ends, written as fast as the client reads it).
   */
  mode: 'ok' | 'reject' | 'throttle' | 'fail' | 'hang' | 'flood';
  /** Bytes of flood written by the time the client went (the sockets' buffers included). */
  flooded: number;
  close(): Promise<void>;
}

const NS = 'http://ses.amazonaws.com/doc/2010-12-01/';

export async function startFakeSes(): Promise<FakeSes> {
  const state: FakeSes = { endpoint: '', received: [], mode: 'ok', flooded: 0, close: async () => undefined };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      // Decoded whole: a character split between two chunks stays one character.
      const form = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
      const refuse = (status: number, code: string, message: string) => {
        res.writeHead(status, { 'Content-Type': 'text/xml' });
        res.end(
          `<ErrorResponse xmlns="${NS}"><Error><Type>Sender</Type><Code>${code}</Code><Message>${message}</Message></Error><RequestId>${randomUUID()}</RequestId></ErrorResponse>`,
        );
      };
      // As SES answers: an unsigned request is 403 before anything else is looked at; an unknown action is 400.
      if (!req.headers.authorization?.startsWith('AWS4-HMAC-SHA256 ')) return refuse(403, 'MissingAuthenticationToken', 'Missing Authentication Token');
      if (form.Action !== 'SendEmail') return refuse(400, 'InvalidAction', `The action ${form.Action ?? ''} is not valid for this web service.`);
      state.received.push({ form, authorization: req.headers.authorization });
      // SES does not speak SMTPUTF8: every address must be 7-bit ASCII (a Unicode domain in Punycode, a Unicode
      // friendly-from name as a MIME encoded-word), else the message is refused.
      const addresses = Object.entries(form).filter(([name]) => name === 'Source' || name.startsWith('Destination.'));
      if (addresses.some(([, value]) => /[\u0080-\uFFFF]/.test(value))) return refuse(400, 'InvalidParameterValue', 'Illegal address');
      if (state.mode === 'hang') return; // the socket stays open: only the caller's time limit ends the call
      if (state.mode === 'flood') {
        res.writeHead(200, { 'Content-Type': 'text/xml' });
        res.write(`<SendEmailResponse xmlns="${NS}"><SendEmailResult><MessageId>`);
        const chunk = Buffer.alloc(64 * 1024, 'a');
        const pump = () => {
          while (!res.destroyed && state.flooded < 256 * 1024 * 1024) {
            state.flooded += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
        };
        return pump();
      }
      if (state.mode === 'fail') {
        res.writeHead(500, { 'Content-Type': 'text/xml' });
        return res.end(
          `<ErrorResponse xmlns="${NS}"><Error><Type>Receiver</Type><Code>InternalFailure</Code><Message>An internal error occurred.</Message></Error><RequestId>${randomUUID()}</RequestId></ErrorResponse>`,
        );
      }
      if (state.mode !== 'ok') {
        const [code, message] =
          state.mode === 'reject' ? ['MessageRejected', 'Email address is not verified.'] : ['Throttling', 'Maximum sending rate exceeded.'];
        return refuse(400, code, message);
      }
      res.writeHead(200, { 'Content-Type': 'text/xml' });
      res.end(
        `<SendEmailResponse xmlns="${NS}"><SendEmailResult><MessageId>${randomUUID()}</MessageId></SendEmailResult>` +
          `<ResponseMetadata><RequestId>${randomUUID()}</RequestId></ResponseMetadata></SendEmailResponse>`,
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  state.endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () =>
    new Promise<void>((r) => {
      server.close(() => r());
      server.closeAllConnections();
    });
  return state;
}
