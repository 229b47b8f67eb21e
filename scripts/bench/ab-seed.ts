import { seedChatOrg } from './seed-chat-org';

/**
 * A child of `npm run bench:ab` (ab.ts): seeds the database of DATABASE_URL under REDIS_PREFIX for
 * the simulator at AB_SIMULATOR_URL (seed-chat-org.ts) and prints `{"key": ...}` on its last line.
 * A process of its own because the configuration (database, prefix) is read once per process.
 */
seedChatOrg(String(process.env.AB_SIMULATOR_URL), 'ab').then(
  ({ key }) => console.log(JSON.stringify({ key })),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
