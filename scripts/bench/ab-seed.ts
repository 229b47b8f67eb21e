/**
 * A child of `npm run bench:ab` (ab.ts): migrates the database of DATABASE_URL, seeds the catalog
 * under REDIS_PREFIX for the simulator at AB_SIMULATOR_URL, and creates an organization whose chat
 * lane takes any load, with one key. Prints `{"key": ...}` on its last line. A process of its own
 * because the configuration (database, prefix) is read once per process.
 */
async function main(): Promise<void> {
  const { db, closeDb } = await import('../../shared/db/sequelize.js');
  const { migrate } = await import('../../shared/db/migrate.js');
  const { seed } = await import('../../shared/db/seed.js');
  const { createRedis } = await import('../../shared/redis/connection.js');
  const { createApiKey, createOrg } = await import('../../shared/tenancy/ops.js');
  const { Organization } = await import('../../shared/db/models/index.js');
  await migrate(db());
  const redis = createRedis('command');
  await seed(redis, String(process.env.AB_SIMULATOR_URL));
  const org = await createOrg(redis, { name: `ab-${Date.now()}`, plan: 'pro' });
  await Organization.update({ laneOverrides: { 'chat:interactive': 100_000 } }, { where: { id: org.id } });
  const { key } = await createApiKey(redis, { orgId: org.id });
  redis.disconnect();
  await closeDb();
  console.log(JSON.stringify({ key }));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
