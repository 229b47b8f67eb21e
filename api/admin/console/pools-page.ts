import type { Router, Request, Response } from 'express';
import type { RedisClient } from '../../../shared/redis/connection';
import { Model, Provider } from '../../../shared/db/models';
import { PoolState } from '../../../shared/routing/pool-state';
import { poolOfOne } from '../../../shared/catalog/deployments';
import { html, type Html } from '../../web/html';

type Render = (req: Request, res: Response, tab: string, body: (csrf: string) => Html) => void;

const HEALTH: Record<string, string> = { healthy: '', cooling_down: 'on', probing: 'on', awaiting_probe: 'on' };

/**
 * `GET /pools`: every chat model's pool, its deployments with their weights, tiers and limits, and
 * their live health as every worker sees it (the same Redis state as `/inference-model-pools/{id}/state`).
 * Model ids and deployment names are `code.id`, never broken at their hyphens (api/web/style.ts); an upstream
 * name, which can be as long as an inference profile's ARN, wraps where its line ends (`code.id.wrap`).
 */
export function poolsPage(r: Router, redis: RedisClient, render: Render): void {
  const state = new PoolState(redis, { probeLeaseMs: 0, inflightLeaseMs: 0, backoffBaseMs: 0, backoffMaxMs: 0 });
  r.get('/pools', async (req, res) => {
    const [models, providers] = await Promise.all([Model.findAll({ order: [['publicId', 'ASC']], limit: 500 }), Provider.findAll()]);
    const providerName = new Map(providers.map((p) => [p.id, p.name]));
    const chat = models.filter((m) => m.capabilities.chat);
    const rows = await Promise.all(
      chat.map(async (m) => {
        const specs = m.deployments?.length ? m.deployments : poolOfOne(String(providerName.get(m.providerId)), m.upstreamName);
        const live = await state.inspect(m.id, specs.map((d) => d.name));
        return { m, specs, live };
      }),
    );
    render(req, res, '/pools', () => html`<h1>Model pools</h1><div class="card"><p class="muted">Deployments of each chat model and their health as every worker sees it (docs/routing.md).</p>
<table><thead><tr><th>Model</th><th>Deployment, provider / upstream</th><th>Weight · tier</th><th>Limits</th><th>Health</th><th>In flight</th><th>Failures</th><th>Fallbacks</th></tr></thead><tbody>
${rows.map(({ m, specs, live }) =>
  specs.map((d, i) => {
    const s = live[i];
    const health = s.coolingForMs > 0 ? 'cooling_down' : s.probing ? 'probing' : s.fails > 0 ? 'awaiting_probe' : 'healthy';
    const fallbacks = m.fallbacks ?? [];
    const limits = [d.rpm ? `${d.rpm} rpm` : '', d.tpm ? `${d.tpm} tpm` : '', d.max_concurrency ? `${d.max_concurrency} concurrent` : ''].filter(Boolean).join(', ') || '—';
    return html`<tr data-pool="${m.publicId}" data-deployment="${d.name}"><td>${i === 0 ? html`<code class="id">${m.publicId}</code>` : ''}</td><td data-label="Deployment"><code class="id">${d.name}</code><br><span class="muted">${d.provider} /</span> <code class="id wrap">${d.upstream}</code></td>
<td data-label="Weight · tier">${String(d.weight ?? 1)} · ${String(d.priority ?? 0)}</td><td data-label="Limits">${limits}</td>
<td data-label="Health"><span class="pill ${HEALTH[health]}" data-health="${health}">${health.replace('_', ' ')}${s.coolingForMs > 0 ? ` (${Math.ceil(s.coolingForMs / 1000)} s)` : ''}</span></td>
<td data-label="In flight">${String(s.inFlight)}</td><td data-label="Failures">${String(s.fails)}</td><td data-label="Fallbacks">${i > 0 ? '' : fallbacks.length ? fallbacks.map((f, j) => html`${j ? ', ' : ''}<code class="id">${f}</code>`) : '—'}</td></tr>`;
  }),
)}
${rows.length ? '' : html`<tr><td colspan="9" class="muted">No chat models in the catalog.</td></tr>`}</tbody></table></div>`);
  });
}
