import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** A message as the local SMTP server received it: its envelope's recipients and its raw text. */
export interface ReceivedMail {
  to: string[];
  raw: string;
}

/** A local SMTP server: its `smtp://` address and every message it has received, in order. */
export interface Inbox {
  url: string;
  messages: ReceivedMail[];
  close(): Promise<void>;
}

/** Starts a local SMTP server on a free port that keeps what it receives (no TLS, no sign-in). */
export async function startInbox(): Promise<Inbox> {
  const messages: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        messages.push({ to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString('utf8') });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`,
    messages,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
