// The port of outgoing e-mail (semantics I9): the activation message of a digital credential.
// Implemented over SMTP by adapters/mail/smtpMailer.ts (`--smtp URL`); a service without one refuses
// `sendEmail` with a clear error rather than dropping the message.

/** One message. */
export interface MailMessage {
  readonly to: string;
  readonly subject: string;
  readonly text: string;
  readonly html?: string;
}

/** Sends messages; resolves once the SMTP server accepted the message. */
export interface Mailer {
  send(message: MailMessage): Promise<void>;
  close(): Promise<void>;
}
