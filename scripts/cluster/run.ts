import { spawn } from 'child_process';
import path from 'path';
import { startLocalCluster } from './redis-cluster';

/**
 * `npm run test:cluster`: starts a three-master Redis Cluster on loopback (scripts/cluster/redis-cluster.ts),
 * runs the cluster suite (dist/test/cluster) through the usual test environment (npm test's database
 * and services) with REDIS_CLUSTER_NODES set, then stops the cluster. Extra arguments go to mocha.
 */
async function main(): Promise<void> {
  const cluster = await startLocalCluster(3);
  process.stdout.write(`redis cluster: ${cluster.nodes}\n`);
  let code = 1;
  try {
    const child = spawn(
      process.execPath,
      [path.resolve(__dirname, '../test-env.js'), 'mocha', '--no-config', '--require', 'dist/test/cluster/hooks.js', '--timeout', '30000', '--exit',
        'dist/test/cluster/**/*.test.js', ...process.argv.slice(2)],
      {
        stdio: 'inherit',
        env: {
          ...process.env,
          REDIS_CLUSTER_NODES: cluster.nodes,
          // npm test's environment wants a Redis URL (it empties the prefix there): one of the cluster's nodes.
          REDIS_URL: `redis://127.0.0.1:${cluster.ports[0]}`,
          // separate web and worker processes, as in production: the worker governor on as there
          // (npm test's one-process harness turns it off; scripts/test-env.ts)
          WORKER_LAG_MS: process.env.WORKER_LAG_MS ?? '5',
          TEST_DATABASE_NAME: process.env.TEST_CLUSTER_DATABASE_NAME ?? `${process.env.TEST_DATABASE_NAME ?? 'gateway_test'}_cluster`,
        },
      },
    );
    const forward = (sig: NodeJS.Signals) => child.kill(sig);
    process.on('SIGINT', forward).on('SIGTERM', forward);
    code = await new Promise<number>((resolve) => child.on('exit', (c, sig) => resolve(c ?? (sig ? 1 : 0))));
  } finally {
    await cluster.stop();
  }
  process.exit(code);
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
