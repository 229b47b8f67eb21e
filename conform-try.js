const Ajv2020 = require('ajv/dist/2020').default; const addFormats = require('ajv-formats').default;
function nullable(n){ if(Array.isArray(n)) return n.map(nullable); if(!n||typeof n!=='object') return n; const o={}; for(const[k,v] of Object.entries(n)) o[k]=nullable(v); if(o.nullable===true){delete o.nullable; return {anyOf:[o,{type:'null'}]};} if (o.nullable===false) delete o.nullable; return o;}
const t0=Date.now();
const doc = nullable(require('/work/wt/conform/test/fixtures/vendor/openai/openapi.json'));
const ajv = new Ajv2020({ strict: false, allErrors: true, logger: false });
addFormats(ajv);
ajv.addSchema(doc, 'openai');
console.log('add', Date.now()-t0);
const names=['ErrorResponse','CreateChatCompletionResponse','CreateChatCompletionStreamResponse','Response','ResponseStreamEvent','CreateEmbeddingResponse','ListModelsResponse','Model','CreateCompletionResponse','ImagesResponse','CreateTranscriptionResponseJson','CreateTranscriptionResponseVerboseJson'];
for (const n of names) {
 const t=Date.now(); const v = ajv.getSchema('openai#/components/schemas/'+n); console.log(n, !!v, Date.now()-t);
}
const yaml=require('js-yaml'); const t1=Date.now(); const c=yaml.load(require('fs').readFileSync('/work/wt/conform/test/fixtures/vendor/cohere/cohere-openapi.yaml','utf8')); console.log('yaml',Date.now()-t1);
const r=c.paths['/v2/rerank'].post.responses; console.log(JSON.stringify(r['200']).slice(0,100)); console.log(JSON.stringify(c.components.responses.BadRequest), JSON.stringify(c.components.responses.Unauthorized).slice(0,300));
const s=doc.components.schemas; const ev={}; for (const [k,v] of Object.entries(s)) { const e=v.properties&&v.properties.type&&v.properties.type.enum; if (e&&e.length===1&&/^response\./.test(e[0])) (ev[e[0]]=ev[e[0]]||[]).push(k);} console.log(Object.keys(ev).length, JSON.stringify(Object.entries(ev).filter(([k,v])=>v.length>1)));
console.log(JSON.stringify(s.ResponseStreamEvent).slice(0,300));
