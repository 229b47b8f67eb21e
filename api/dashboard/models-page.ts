import type { Request, Response } from 'express';
import { Model } from '../../shared/db/models';
import { capabilityPolicy } from '../../shared/policies/capability';
import { laneLimit } from '../../shared/lanes/policy';
import { config } from '../../shared/config/env';
import type { Directory, OrgContext } from '../../shared/tenancy/directory';
import { BACKGROUND_SUFFIX } from '../../shared/catalog/catalog';
import { EMBEDDINGS_LANE_DEFAULT } from '../dispatch/embeddings';
import { html } from '../web/html';
import { count } from '../web/format';
import type { WebKit } from '../web/session';
import { renderOrgPage } from './org-page';
import { splitPrices, type StoredPrices } from '../../shared/catalog/tier-prices';

/** Whether the org's capability policies let it call the model (the checks the inference routes make). */
export function orgMayCall(org: OrgContext, m: Model): boolean {
  const c = m.capabilities ?? {};
  if (c.decision && capabilityPolicy(org, 'systemone') === 'off') return false;
  if (c.transcription && capabilityPolicy(org, 'audio') === 'off') return false;
  if (c.image_generation && capabilityPolicy(org, 'image_generation') === 'off') return false;
  return true;
}

/** `$` and at least two decimals, at most six significant digits. */
export function dollars(v: number): string {
  const s = String(Number(v.toPrecision(6)));
  const decimals = s.includes('.') ? s.split('.')[1].length : 0;
  return `$${decimals >= 2 ? s : v.toFixed(2)}`;
}

/** A catalog price (micro-dollars per unit) as a buyer reads it. */
export function priceText(unit: string, micros: number): string {
  if (unit === 'input_token') return `${dollars(micros)} / 1M input tokens`; // micro-dollars per token = dollars per million
  if (unit === 'output_token') return `${dollars(micros)} / 1M output tokens`;
  if (unit === 'audio_input_token') return `${dollars(micros)} / 1M audio input tokens`; // shared/catalog/audio-prices.ts
  if (unit === 'audio_output_token') return `${dollars(micros)} / 1M audio output tokens`;
  if (unit === 'image') return `${dollars(micros / 1e6)} / image`;
  if (unit.startsWith('image_')) return `${dollars(micros / 1e6)} / image ${unit.slice(6)}`;
  if (unit === 'audio_second') return `${dollars((micros * 60) / 1e6)} / audio minute`;
  if (unit === 'search_unit') return `${dollars(micros / 1e6)} / search unit`;
  if (unit === 'web_search_call') return `${dollars(micros / 1e6)} / web search call`; // one a request: docs/catalog.md
  return `${dollars(micros / 1e6)} / ${unit}`;
}

/** A model's prices as lines: its list prices, then each priced OpenAI service tier's (`service_tiers`, shared/catalog/tier-prices.ts). */
function priceLines(stored: StoredPrices): string[] {
  const { prices, tierPrices } = splitPrices(stored);
  const lines = Object.entries(prices).map(([u, v]) => priceText(u, v));
  for (const [tier, p] of Object.entries(tierPrices ?? {})) {
    lines.push(`service_tier ${tier}: ${priceText('input_token', p.input_token ?? 0)}, ${priceText('output_token', p.output_token ?? 0)}`);
  }
  return lines;
}

/** The org's concurrent-request lanes the model's requests take: `pool:lane` and its count. */
function lanesOf(org: OrgContext, m: Model): Array<[string, number]> {
  const c = m.capabilities ?? {};
  const bg = org.entitlements.background === true;
  if (c.chat) return [['chat:interactive', laneLimit(org, 'chat', 'interactive')], ...(bg ? [['chat:background', laneLimit(org, 'chat', 'background')] as [string, number]] : [])];
  if (c.image_generation) return [['images:interactive', laneLimit(org, 'images', 'interactive')], ...(bg ? [['images:background', laneLimit(org, 'images', 'background')] as [string, number]] : [])];
  if (c.transcription) return [['audio:default', laneLimit(org, 'audio', 'default', config().audioOrgConcurrency)]];
  if (c.embeddings || c.rerank) return [['embeddings:default', laneLimit(org, 'embeddings', 'default', EMBEDDINGS_LANE_DEFAULT)]];
  if (c.decision) return [['systemone:interactive', laneLimit(org, 'systemone', 'interactive')]];
  return [];
}

const CAPS = ['chat', 'vision', 'embeddings', 'rerank', 'image_generation', 'transcription', 'decision'] as const;

/** `GET /dashboard/o/{org}/models`: the catalog models the org may call, with prices and limits. */
export function modelsPage(deps: { directory: Directory }, kit: WebKit) {
  return async (req: Request, res: Response): Promise<void> => {
    const org = (await deps.directory.org(res.locals.access!.org.id))!;
    const models = (await Model.findAll({ where: { enabled: true }, order: [['publicId', 'ASC']] })).filter((m) => orgMayCall(org, m));
    const bg = org.entitlements.background === true;
    renderOrgPage(req, res, kit, 'Models', 'models', () => html`<h1>Models</h1>
<div class="card"><p class="muted">The models this organization may call, at list prices (what usage is charged at). Context window and
maximum output are in tokens; lanes are how many requests of the organization run at once in each pool (more wait, or are refused with 429).
${bg ? html`Chat and image models also answer as <code>{model}${BACKGROUND_SUFFIX}</code> on the background lane.` : ''}
An API key may be limited to fewer models (API keys page).</p>
<table data-test="models"><thead><tr><th>Model</th><th>Can</th><th>Prices</th><th>Context window</th><th>Max output</th><th>Lanes</th></tr></thead><tbody>
${models.map((m) => html`<tr data-model="${m.publicId}"><td data-label="Model"><code class="id">${m.publicId}</code>${m.displayName && m.displayName !== m.publicId ? html`<br><span class="muted">${m.displayName}</span>` : ''}</td>
<td data-label="Can">${CAPS.filter((c) => m.capabilities?.[c]).join(', ').replace(/_/g, ' ')}</td>
<td data-label="Prices" data-test="prices">${priceLines(m.prices ?? {}).map((line, i) => html`${i ? html`<br>` : ''}<span class="nowrap">${line}</span>`)}</td>
<td data-label="Context window">${m.contextWindow ? count(m.contextWindow) : '—'}</td><td data-label="Max output">${m.maxOutputTokens ? count(m.maxOutputTokens) : '—'}</td>
<td data-label="Lanes" data-test="lanes">${lanesOf(org, m).map(([l, n], i) => html`${i ? html`<br>` : ''}<span class="nowrap">${l} ${n}</span>`)}</td></tr>`)}
${models.length ? '' : html`<tr><td colspan="6" class="muted">No model is available to this organization.</td></tr>`}</tbody></table></div>`);
  };
}
