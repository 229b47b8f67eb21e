import { AuditLog } from '../db/models';
import { logger } from '../logger';
import { storable } from '../text/storable';

export type ActorType = 'platform_key' | 'admin_token' | 'cli' | 'web_session';

export interface Actor {
  type: ActorType;
  /** Platform key id, or the user id behind an admin token or a CLI action. */
  id: string | null;
  /** A readable name: the key's visible prefix, or the user's email. Never a secret. */
  label: string | null;
}

export interface AuditEntry {
  actor: Actor;
  method: string;
  path: string;
  family?: string | null;
  targetId?: string | null;
  status: number;
  requestId?: string | null;
  /** Names of the body fields that were sent; their values (possibly secrets) are never stored. */
  fields?: string[];
}

/** Records who did what, to what, when, and how it ended. A failed audit write is logged, never thrown. */
export async function recordAudit(e: AuditEntry): Promise<void> {
  try {
    await AuditLog.create({
      actorType: e.actor.type,
      actorId: e.actor.id,
      actorLabel: e.actor.label,
      method: e.method,
      path: storable(e.path).slice(0, 512),
      family: e.family ?? null,
      // A client may name the target (an id in the path): cut to the column, or the row would be lost (fuzzing found it).
      targetId: e.targetId == null ? null : storable(e.targetId).slice(0, 255),
      status: e.status,
      outcome: e.status < 400 ? 'success' : 'failure',
      requestId: e.requestId ?? null,
      fields: (e.fields ?? []).map((f) => storable(f).slice(0, 200)), // names a client chose: NUL would lose the row
    });
  } catch (err) {
    logger.error({ err, path: e.path }, 'could not write an audit log entry');
  }
}
