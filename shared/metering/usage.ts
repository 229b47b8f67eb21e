import { UsageEvent } from '../db/models';

export interface UsageRecord {
  requestId: string;
  orgId: string;
  projectId: string | null;
  apiKeyId: string | null;
  model: string;
  modality: string;
  lane: string | null;
  inputTokens?: number;
  outputTokens?: number;
  units?: Record<string, number>;
  passthrough?: boolean;
}

/**
 * Writes one usage event, idempotently: the request id is unique, so a retried job or a replayed
 * write is a no-op. Called by workers before they publish the result, so a crash after the upstream
 * answered still leaves the event (or the retry writes it once).
 */
export async function recordUsage(u: UsageRecord): Promise<void> {
  await UsageEvent.bulkCreate(
    [
      {
        requestId: u.requestId,
        orgId: u.orgId,
        projectId: u.projectId,
        apiKeyId: u.apiKeyId,
        model: u.model,
        modality: u.modality,
        lane: u.lane,
        inputTokens: u.inputTokens ?? 0,
        outputTokens: u.outputTokens ?? 0,
        units: u.units ?? {},
        passthrough: u.passthrough ?? false,
      },
    ],
    { ignoreDuplicates: true },
  );
}
