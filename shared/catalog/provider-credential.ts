import { PlatformCredential, Provider } from '../db/models';
import { decrypt } from '../crypto';

/**
 * A provider's platform credential, decrypted in memory only: the one set through the management API
 * (platform-credentials), else the provider's own (catalog import). The workers cache it
 * (workers/credentials.ts); the catalog's writes read it to ask a provider about a deployment
 * (a Bedrock application inference profile's model: base-models.ts).
 */
export async function providerCredential(providerId: string): Promise<string | undefined> {
  const cred = await PlatformCredential.findOne({ where: { providerId } });
  if (cred) return decrypt(cred.secretEncrypted);
  const p = await Provider.findByPk(providerId);
  return p?.apiKeyEncrypted ? decrypt(p.apiKeyEncrypted) : undefined;
}
