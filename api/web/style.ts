/** The interfaces' one stylesheet, served by each at `<base>/assets/style.css` (nothing from a CDN). */
export const STYLE = `
*{box-sizing:border-box}body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d2433;background:#f5f6f8}
a{color:#2457c5;text-decoration:none}a:hover{text-decoration:underline}
header{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1.25rem;padding:.75rem 1.25rem;background:#1d2433;color:#fff}
header .brand{font-weight:600;margin-right:auto}header a{color:#dfe6f5}header a.on{color:#fff;font-weight:600;border-bottom:2px solid #7aa2ff}
header .muted{color:#aab3c5}header form{margin:0}header button{background:transparent;color:#dfe6f5;border:1px solid #56607a;padding:.2rem .6rem}
.banner{background:#b3261e;color:#fff;padding:.5rem 1.25rem;font-weight:600}
main{max-width:1100px;margin:0 auto;padding:1.25rem}
h1{font-size:1.4rem;margin:.25rem 0 1rem}h2{font-size:1.1rem;margin:1.5rem 0 .5rem}
.card{background:#fff;border:1px solid #dde1e8;border-radius:8px;padding:1rem;margin-bottom:1rem;overflow-x:auto}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.45rem .5rem;border-bottom:1px solid #eceff3;vertical-align:top}
th{font-size:.8rem;text-transform:uppercase;letter-spacing:.03em;color:#5b6477}
form.inline{display:inline}label{display:block;margin:.5rem 0 .2rem;font-weight:500}
input[type=text],input[type=email],input[type=password],input[type=date],input[type=datetime-local],input[type=number],select{width:100%;max-width:24rem;padding:.45rem .55rem;border:1px solid #c5cbd6;border-radius:6px;font:inherit}
button{font:inherit;padding:.4rem .9rem;border-radius:6px;border:1px solid #2457c5;background:#2457c5;color:#fff;cursor:pointer}
button.danger{background:#fff;color:#b3261e;border-color:#b3261e}button.plain{background:#fff;color:#2457c5}
.secret{font-family:ui-monospace,monospace;background:#fff8d6;border:1px solid #e8d47a;padding:.6rem;border-radius:6px;word-break:break-all}
.muted{color:#5b6477}.nowrap{white-space:nowrap}
.sr-only{position:absolute;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap;border:0}.error{color:#b3261e;font-weight:500}.ok{color:#1d7a3a}
/* a save's notice stands out from the cards around it */
.card[role=status]{background:#eef8f1;border-color:#9fd3b0;color:#14532d}
.signin{max-width:24rem;margin:4rem auto}.row{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:end}
/* a refused form: the message under its field made that field taller, and aligned at the bottom its input rose above its neighbours';
   aligned at the top instead, with the buttons lowered by a label's height to stand level with the inputs */
.row:has(.error){align-items:start}.row:has(.error):has(label)>div:not(:has(label)):has(>button){margin-top:calc(1.5em + .7rem)}
.checks label{display:inline-flex;gap:.3rem;font-weight:400;margin-right:.8rem}
.chart svg{width:100%;height:auto;max-width:1000px}.chart .plot{display:flex;align-items:flex-start}.chart svg.yaxis{width:8.4%;flex:none}.chart .plot .scroll{flex:1;min-width:0}.legend span{display:inline-block;margin-right:1rem;font-size:.85rem}
.legend i{display:inline-block;width:.8rem;height:.8rem;margin-right:.3rem;border-radius:2px;vertical-align:-1px}
.pill{display:inline-block;white-space:nowrap;padding:0 .45rem;border-radius:999px;font-size:.8rem;background:#eceff3}.pill.on{background:#fde2e0;color:#b3261e}
.c0{background:#2457c5}.c1{background:#e07a1f}.c2{background:#1d7a3a}.c3{background:#9b3fb5}.c4{background:#b3261e}.c5{background:#0f8a8a}.c6{background:#6b7280}.c7{background:#c59a00}
dialog.confirm{position:fixed;inset:0;margin:auto;max-width:32rem;width:calc(100% - 2rem);height:fit-content;box-shadow:0 0 0 100vmax rgba(20,25,40,.45);z-index:10}
a.button-link{display:inline-block;padding:.4rem .9rem;border:1px solid #c5cbd6;border-radius:6px;color:#1d2433}
td form.row{flex-wrap:nowrap;gap:.4rem;align-items:center}td select{width:auto}
summary.button{display:inline-block;list-style:none;cursor:pointer;padding:.4rem .9rem;border-radius:6px;border:1px solid #2457c5;background:#fff;color:#2457c5}
summary.button::-webkit-details-marker{display:none}summary.danger{color:#b3261e;border-color:#b3261e}
details.confirm{display:inline-block;vertical-align:top;margin:0 .25rem .25rem 0}details.confirm[open]{display:block}
.confirm-body{margin:.4rem 0;padding:.6rem .75rem;overflow-wrap:anywhere;min-width:16rem;border:1px solid #f0c4c0;background:#fff8f7;border-radius:6px;max-width:36rem}.confirm-body p{margin:0 0 .5rem}.confirm-body form{margin:0}
tr.has-actions td{border-bottom:0}td.email{overflow-wrap:anywhere}td.figures{min-width:14rem}tr.key-actions td,tr.row-actions td{padding-top:0}h1 code{word-break:break-all}
/* the first thing Tab reaches on every page: hidden until focused, then over the header's top left corner */
a.skip:not(:focus){position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
a.skip:focus{position:absolute;top:.5rem;left:.5rem;z-index:20;padding:.4rem .8rem;background:#fff;color:#1d2433;border:2px solid #2457c5;border-radius:6px;font-weight:600}
main:focus{outline:none}
/* an id (a project's id and slug, a model or deployment name) is never broken at its hyphens: its column takes its width.
   One that may be longer than a column (an upstream name, an ARN; any id on a phone) goes onto a line of its own,
   whole, and only one longer than that line wraps, where the line ends */
code.id{white-space:nowrap}code.id.wrap{display:inline-block;max-width:100%;white-space:normal;line-break:anywhere;vertical-align:top}
/* a project's name reads on one line at 1280 px (its slug under it); an owner's budget form and Archive beside each other under it */
@media (min-width:601px){td.name{min-width:22rem}}
.actions{display:flex;flex-wrap:wrap;gap:.5rem 1.5rem;align-items:flex-start}.actions>details.confirm{margin:calc(1.5em + .7rem) 0 0}
td form.row.fields{flex-wrap:wrap;gap:.5rem 1rem;align-items:end;margin:0}td form.row.fields:has(.error){align-items:start}td form.row.fields .error{max-width:14rem;margin:.3rem 0 0}td form.row.fields input[type=number]{width:9rem}
header .who{display:flex;align-items:center;gap:.5rem 1rem;flex-wrap:wrap}
.card h2:first-child,.card h1:first-child,.card>p:first-child{margin-top:0}.card>p:last-child{margin-bottom:0}td form.inline{margin:0 .25rem .25rem 0;display:inline-block}
/* the lane overrides field shows a two-pair value (chat:interactive=4, images:background=1) whole at 1280 px */
@media (min-width:601px){input.lanes{min-width:22rem}}
@media (max-width:600px){main{padding:.75rem}header{padding:.6rem .75rem}tr.has-actions{border-bottom:0;padding-bottom:0}.actions>details.confirm{margin-top:0}
 thead{display:none}table,tbody,tr,td{display:block;width:100%}tr{padding:.4rem 0;border-bottom:1px solid #eceff3}td{border:0;padding:.1rem .2rem}
 td:empty{display:none}td[data-label]::before{content:attr(data-label) ": ";color:#5b6477}
 code.id{display:inline-block;max-width:100%;white-space:normal;line-break:anywhere;vertical-align:top}
 .chart .scroll{overflow-x:auto;direction:rtl}.chart .scroll svg{min-width:589px;direction:ltr}.chart svg.yaxis{width:54px}}
`;
