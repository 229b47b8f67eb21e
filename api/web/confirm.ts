import { html, type Html } from './html';

/**
 * A button for an action that cannot be taken back (revoke, remove, delete, archive), asking first
 * without a script: `label` opens what the action does and a second button, `confirm`, which posts
 * the form to `action`. Nothing is posted until that one is pressed; pressing `label` again closes it.
 * `fields` go into the posted form before the button (a choice the action takes).
 */
export function confirmedAction(o: { action: string; csrf: string; label: string; confirm: string; question: Html | string; fields?: Html; plain?: boolean }): Html {
  return html`<details class="confirm" data-confirm="${o.action}"><summary class="button ${o.plain ? 'plain' : 'danger'}">${o.label}</summary><div class="confirm-body"><p>${o.question}</p>
<form method="post" action="${o.action}"><input type="hidden" name="_csrf" value="${o.csrf}">${o.fields ?? ''}<button${o.plain ? '' : html` class="danger"`} data-test="confirm">${o.confirm}</button></form></div></details>`;
}
