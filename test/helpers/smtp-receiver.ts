import { SMTPServer } from 'smtp-server';
import { simpleParser, type ParsedMail } from 'mailparser';

/** A real SMTP server on 127.0.0.1 (any free port) that keeps every message it accepts, parsed. */
export interface SmtpReceiver {
  url: string;
  port: number;
  mails: ParsedMail[];
  /** Envelope recipients, per message. */
  recipients: string[][];
  close(): Promise<void>;
}

/** Starts the receiver; `user`/`pass` make it require that login (AUTH PLAIN/LOGIN over plain text, fine on loopback). */
export async function startSmtpReceiver(auth?: { user: string; pass: string }): Promise<SmtpReceiver> {
  const mails: ParsedMail[] = [];
  const recipients: string[][] = [];
  const server = new SMTPServer({
    secure: false,
    disabledCommands: ['STARTTLS'],
    authOptional: !auth,
    allowInsecureAuth: true,
    onAuth(a, _session, cb) {
      if (auth && a.username === auth.user && a.password === auth.pass) return cb(null, { user: a.username });
      cb(new Error('Invalid username or password'));
    },
    onData(stream, session, cb) {
      simpleParser(stream)
        .then((m) => {
          mails.push(m);
          recipients.push(session.envelope.rcptTo.map((r) => r.address));
          cb();
        })
        .catch(cb);
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as { port: number }).port;
  const cred = auth ? `${encodeURIComponent(auth.user)}:${encodeURIComponent(auth.pass)}@` : '';
  return {
    url: `smtp://${cred}127.0.0.1:${port}`,
    port,
    mails,
    recipients,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
