import type { Transporter } from 'nodemailer';
import { config } from '../config/env';
import { logger } from '../logger';

/** What became of an invitation's email: sent, no SMTP configured (the page shows the link), or the server refused or was unreachable. */
export type MailOutcome = 'sent' | 'not_configured' | 'failed';

/** Seconds the SMTP conversation may take before the page gives up and shows the link instead. */
const SMTP_TIMEOUT_MS = 10_000;

let transport: { url: string; t: Transporter } | undefined;

/**
 * One nodemailer transport per SMTP_URL (re-made when the setting changes). nodemailer is loaded at
 * the first invitation mail, not at start: a web pod that sends none does not carry it (about 10 MB
 * of its idle memory; held streams' peak, docs/benchmark.md).
 */
async function transporter(url: string): Promise<Transporter> {
  if (transport?.url !== url) {
    const { default: nodemailer } = await import('nodemailer');
    if (transport?.url === url) return transport.t; // another mail made it meanwhile
    transport?.t.close();
    transport = { url, t: nodemailer.createTransport({ url, connectionTimeout: SMTP_TIMEOUT_MS, greetingTimeout: SMTP_TIMEOUT_MS, socketTimeout: SMTP_TIMEOUT_MS }) };
  }
  return transport.t;
}

export interface InvitationMail {
  to: string;
  orgName: string;
  role: 'owner' | 'member';
  link: string;
  expiresAt: Date | null;
  /** Who invited: the owner's email, or "An operator". */
  invitedBy: string;
}

/**
 * Mails an invitation's link through SMTP_URL (from MAIL_FROM) when it is set. A failure is logged
 * (never the URL: it may carry the SMTP password; never the link: it is the invitation) and answered
 * as `failed`, so the page shows the link to send by hand; the invitation stands either way.
 */
export async function sendInvitationMail(m: InvitationMail): Promise<MailOutcome> {
  const { smtpUrl, mailFrom } = config();
  if (!smtpUrl || !mailFrom) return 'not_configured';
  const until = m.expiresAt ? ` It works once, until ${m.expiresAt.toISOString().slice(0, 16).replace('T', ' ')} UTC, for this email address.` : '';
  try {
    await (await transporter(smtpUrl)).sendMail({
      from: mailFrom,
      to: m.to,
      subject: `You are invited to ${m.orgName}`,
      text: `${m.invitedBy} invited you to join ${m.orgName} as ${m.role === 'owner' ? 'an owner' : 'a member'}.\n\nOpen this link to set your password and join:\n\n${m.link}\n\n${until.trim()}\n`,
    });
    return 'sent';
  } catch (err) {
    logger.warn({ code: (err as { code?: string }).code, responseCode: (err as { responseCode?: number }).responseCode }, 'invitation email could not be sent');
    return 'failed';
  }
}
