import type { InviteCode } from '../../shared/db/models';
import { config } from '../../shared/config/env';
import { INVITE_DAYS, invitePath } from '../../shared/tenancy/invitations';
import { sendInvitationMail, type MailOutcome } from '../../shared/mail/invitation-mail';

/**
 * Mails a new invitation (when SMTP_URL is set) and says on the page what became of it: sent, or the
 * link to send by hand (no mail server, or it refused). Used by the dashboard's members page and the
 * console's Create page.
 */
export async function mailInvitation(inv: InviteCode, orgName: string, invitedBy: string): Promise<{ text: string; link?: string; outcome: MailOutcome }> {
  const link = `${config().publicBaseUrl}${invitePath(inv.code)}`;
  const email = inv.email ?? '';
  const role = inv.role === 'owner' ? 'owner' : 'member';
  const outcome = await sendInvitationMail({ to: email, orgName, role, link, expiresAt: inv.expiresAt, invitedBy });
  if (outcome === 'sent') {
    await inv.update({ mailedAt: new Date() }); // a mailed link is the invitee's alone: no page shows it again
    return { outcome, text: `Invitation into ${orgName} as ${role} emailed to ${email} (one use, ${INVITE_DAYS} days).` };
  }
  const why = outcome === 'failed' ? 'The email could not be sent (the mail server refused it or did not answer). ' : '';
  return { outcome, text: `${why}Invitation into ${orgName} as ${role} for ${email}. Send them this link (one use, ${INVITE_DAYS} days):`, link };
}
