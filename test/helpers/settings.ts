import { resetConfig } from '../../shared/config/env';

/** Runs `fn` with the given settings in the environment (the gateway runs in this process), then restores them. */
export async function withSettings(vars: Record<string, string>, fn: () => Promise<void>): Promise<void> {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  resetConfig();
  try {
    await fn();
  } finally {
    for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k];
    else process.env[k] = v;
    resetConfig();
  }
}
