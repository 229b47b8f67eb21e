/**
 * For benches that run the gateway's processes: migrates the configured database, seeds the catalog
 * for the simulator at `simUrl`, and creates an organization whose chat lane takes any load, with one
 * key. Call it after the bench's environment is set: the modules are loaded here, and configuration
 * is read on first use.
 */
export async function seedChatOrg(simUrl: string, name: string): Promise<{ key: string }> {
  const { db, closeDb } = await import('../../shared/db/sequelize.js');
  const { migrate } = await import('../../shared/db/migrate.js');
  const { seed } = await import('../../shared/db/seed.js');
  const { createRedis } = await import('../../shared/redis/connection.js');
  const { createApiKey, createOrg } = await import('../../shared/tenancy/ops.js');
  const { Organization } = await import('../../shared/db/models/index.js');
  await migrate(db());
  const redis = createRedis('command');
  await seed(redis, simUrl);
  const org = await createOrg(redis, { name: `${name}-${Date.now()}`, plan: 'pro' });
  await Organization.update({ laneOverrides: { 'chat:interactive': 100_000 } }, { where: { id: org.id } });
  const { key } = await createApiKey(redis, { orgId: org.id });
  redis.disconnect();
  await closeDb();
  return { key };
}
