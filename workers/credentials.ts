import { Provider } from '../shared/db/models';
import { decrypt } from '../shared/crypto';

const TTL_MS = 15_000;
const cache = new Map<string, { at: number; key: Promise<string | undefined> }>();

/** The platform credential of a provider, decrypted in memory only, cached briefly. */
export function platformCredential(providerId: string): Promise<string | undefined> {
  const hit = cache.get(providerId);
  if (hit && Date.now() - hit.at < TTL_MS) return hit.key;
  const key = Provider.findByPk(providerId).then((p) => (p?.apiKeyEncrypted ? decrypt(p.apiKeyEncrypted) : undefined));
  cache.set(providerId, { at: Date.now(), key });
  key.catch(() => cache.delete(providerId));
  return key;
}
