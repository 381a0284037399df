import type { SendMailOptions, Transporter } from 'nodemailer';

/** Where the service's e-mails go out (SMTP_URL) and whom they come from (REPORT_MAIL_FROM). */
export interface MailSettings {
  smtpUrl: string;
  from: string;
}

/**
 * The service's one way to send e-mail (monthly reports, password links): nodemailer's SMTP
 * transport, made on the first send, since most processes never send one and nodemailer takes memory.
 */
export class Mailer {
  private transport: Transporter | undefined;

  constructor(readonly settings: MailSettings) {}

  async send(message: Omit<SendMailOptions, 'from'>): Promise<void> {
    this.transport ??= (await import('nodemailer')).default.createTransport(this.settings.smtpUrl);
    await this.transport.sendMail({ ...message, from: this.settings.from });
  }

  close(): void {
    this.transport?.close();
    this.transport = undefined;
  }
}
