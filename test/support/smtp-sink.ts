/**
 * A real SMTP server for tests, in-process on a loopback port (the `smtp-server` package): it
 * asks for a login with one known password, speaks no TLS, and keeps every message it accepts,
 * raw and parsed, so a test can check what really arrived.
 */
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  /** MAIL FROM of the envelope. */
  from: string;
  /** RCPT TO of the envelope: everyone the message went to, Bcc included. */
  recipients: string[];
  /** The message as it came over the wire. */
  raw: string;
  parsed: ParsedMail;
}

export interface SmtpSink {
  port: number;
  user: string;
  password: string;
  /** Every accepted message, in order. */
  received: ReceivedMail[];
  /** Logins refused so far. */
  refusedLogins: number;
  close(): Promise<void>;
}

/** Starts the server on a free loopback port. */
export async function startSmtpSink(options: { user: string; password: string }): Promise<SmtpSink> {
  const received: ReceivedMail[] = [];
  const sink: SmtpSink = {
    port: 0,
    user: options.user,
    password: options.password,
    received,
    refusedLogins: 0,
    close: async () => {},
  };
  const server = new SMTPServer({
    secure: false,
    // Plain text on loopback: the client must not be offered an upgrade it cannot verify.
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authMethods: ['PLAIN', 'LOGIN'],
    logger: false,
    size: 20 * 1024 * 1024,
    onAuth(auth, _session, callback) {
      if (auth.username === options.user && auth.password === options.password) {
        callback(null, { user: auth.username });
        return;
      }
      sink.refusedLogins += 1;
      const err = Object.assign(new Error('Invalid username or password'), { responseCode: 535 });
      callback(err);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        simpleParser(raw)
          .then((parsed) => {
            received.push({
              from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              recipients: session.envelope.rcptTo.map((r) => r.address),
              raw,
              parsed,
            });
            callback();
          })
          .catch((err: Error) => callback(err));
      });
    },
  });
  server.on('error', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.server.address();
  sink.port = typeof address === 'object' && address ? address.port : 0;
  sink.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return sink;
}
