import { providerCredential } from '../shared/catalog/provider-credential';

const TTL_MS = 15_000;
/** A cached load: its promise, and its value once it resolved (platformCredentialNow). */
interface Cached {
  at: number;
  key: Promise<string | undefined>;
  value?: { key: string | undefined };
}
const cache = new Map<string, Cached>();

/** The platform credential of a provider, decrypted in memory only, cached briefly (a rotation is seen within 15 s). */
export function platformCredential(providerId: string): Promise<string | undefined> {
  const hit = cache.get(providerId);
  if (hit && Date.now() - hit.at < TTL_MS) return hit.key;
  const key = providerCredential(providerId);
  const entry: Cached = { at: Date.now(), key };
  cache.set(providerId, entry);
  key.then(
    (k) => {
      entry.value = { key: k };
    },
    () => cache.delete(providerId),
  );
  return key;
}

/**
 * The credential when it is cached and loaded (`{ key }`), else undefined: a caller that has it goes
 * on without an await, so a job's upstream request is handed to undici in the turn the job began
 * (before BullMQ's fetch of the next job is written: docs/benchmark.md, fourteenth session).
 */
export function platformCredentialNow(providerId: string): { key: string | undefined } | undefined {
  const hit = cache.get(providerId);
  return hit && Date.now() - hit.at < TTL_MS ? hit.value : undefined;
}
