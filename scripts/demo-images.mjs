// Draws the demo data set's images (two per industry) into src/web/assets/demo/ as small WebP
// files: generated, so they are free to ship. Run again after changing a motif:
//   node scripts/demo-images.mjs
import { mkdirSync } from 'node:fs';
import sharp from 'sharp';

const out = new URL('../src/web/assets/demo/', import.meta.url);
mkdirSync(out, { recursive: true });

/** Per industry: two colours and two simple scenes drawn from shapes (no text, no people). */
const industries = {
  dental: { colours: ['#d8f1f4', '#5aa9c7'], shapes: [tooth, smile] },
  bakery: { colours: ['#f7e6cc', '#c98a4b'], shapes: [loaf, bun] },
  saas: { colours: ['#e3e8fb', '#4f63d2'], shapes: [dashboard, chart] },
  hotel: { colours: ['#fde7d2', '#2f7fa8'], shapes: [seaView, bed] },
  law: { colours: ['#ece6dc', '#5b4a3a'], shapes: [scales, books] },
  plumbing: { colours: ['#dcebf5', '#2d6d96'], shapes: [pipes, tap] },
  physio: { colours: ['#e2f3e4', '#3c8f5a'], shapes: [figure, mat] },
};

function tooth(c) {
  return `<path d="M400 150c-60-40-150-20-150 80 0 90 40 140 60 230 10 40 60 40 70 0l20-90 20 90c10 40 60 40 70 0 20-90 60-140 60-230 0-100-90-120-150-80z" fill="#fff" stroke="${c}" stroke-width="10"/>`;
}
function smile(c) {
  return `<circle cx="480" cy="270" r="190" fill="#fff"/><path d="M360 300q120 110 240 0" stroke="${c}" stroke-width="18" fill="none" stroke-linecap="round"/><circle cx="410" cy="220" r="18" fill="${c}"/><circle cx="550" cy="220" r="18" fill="${c}"/>`;
}
function loaf(c) {
  return `<ellipse cx="480" cy="300" rx="260" ry="130" fill="${c}"/><path d="M330 260l40 60M420 240l40 70M510 240l40 70M600 260l30 50" stroke="#f7e6cc" stroke-width="14" stroke-linecap="round"/>`;
}
function bun(c) {
  return `<circle cx="360" cy="300" r="110" fill="${c}"/><circle cx="600" cy="300" r="110" fill="${c}" opacity=".85"/><circle cx="480" cy="230" r="90" fill="#e9b97c"/>`;
}
function dashboard(c) {
  return `<rect x="200" y="110" width="560" height="340" rx="24" fill="#fff"/><rect x="240" y="150" width="200" height="120" rx="12" fill="${c}" opacity=".25"/><rect x="470" y="150" width="250" height="40" rx="10" fill="${c}" opacity=".5"/><rect x="470" y="210" width="180" height="40" rx="10" fill="${c}" opacity=".35"/><rect x="240" y="300" width="480" height="110" rx="12" fill="${c}" opacity=".15"/>`;
}
function chart(c) {
  return `<rect x="220" y="100" width="520" height="360" rx="24" fill="#fff"/>${[120, 200, 160, 260, 300]
    .map((h, i) => `<rect x="${270 + i * 90}" y="${420 - h}" width="56" height="${h}" rx="8" fill="${c}" opacity="${0.4 + i * 0.12}"/>`)
    .join('')}`;
}
function seaView(c) {
  return `<rect x="0" y="300" width="960" height="240" fill="${c}"/><circle cx="700" cy="200" r="80" fill="#f9b867"/><path d="M0 300q120-30 240 0t240 0 240 0 240 0" fill="none" stroke="#fff" stroke-width="8"/>`;
}
function bed(c) {
  return `<rect x="220" y="260" width="520" height="140" rx="20" fill="#fff"/><rect x="240" y="220" width="140" height="70" rx="24" fill="${c}" opacity=".5"/><rect x="220" y="390" width="30" height="70" fill="${c}"/><rect x="710" y="390" width="30" height="70" fill="${c}"/>`;
}
function scales(c) {
  return `<rect x="470" y="120" width="20" height="300" fill="${c}"/><rect x="300" y="150" width="360" height="14" fill="${c}"/><path d="M300 160l-70 130h140zM660 160l-70 130h140z" fill="${c}" opacity=".6"/><rect x="400" y="420" width="160" height="24" rx="8" fill="${c}"/>`;
}
function books(c) {
  return ['#8c6b4f', c, '#a88b68', '#6e5744', c]
    .map((fill, i) => `<rect x="${260 + i * 90}" y="${140 + (i % 2) * 30}" width="70" height="${300 - (i % 2) * 30}" rx="6" fill="${fill}"/>`)
    .join('');
}
function pipes(c) {
  return `<path d="M160 200h360v160h280" fill="none" stroke="${c}" stroke-width="46" stroke-linejoin="round"/><circle cx="520" cy="200" r="34" fill="#fff" stroke="${c}" stroke-width="10"/>`;
}
function tap(c) {
  return `<rect x="300" y="150" width="300" height="60" rx="30" fill="${c}"/><rect x="540" y="150" width="60" height="170" rx="20" fill="${c}"/><path d="M570 350q-20 40 0 60q20-20 0-60z" fill="#7fc2ea"/>`;
}
function figure(c) {
  return `<circle cx="480" cy="140" r="50" fill="${c}"/><path d="M480 190v140M480 230l-110 60M480 230l110-60M480 330l-80 130M480 330l90 120" stroke="${c}" stroke-width="30" stroke-linecap="round"/>`;
}
function mat(c) {
  return `<rect x="200" y="360" width="560" height="50" rx="25" fill="${c}" opacity=".6"/><circle cx="330" cy="300" r="60" fill="${c}"/><rect x="420" y="290" width="260" height="20" rx="10" fill="${c}"/>`;
}

for (const [name, { colours, shapes }] of Object.entries(industries)) {
  for (const [index, shape] of shapes.entries()) {
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="960" height="540" viewBox="0 0 960 540">
<defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="${colours[0]}"/><stop offset="1" stop-color="#ffffff"/></linearGradient></defs>
<rect width="960" height="540" fill="url(#g)"/>${shape(colours[1])}</svg>`;
    await sharp(Buffer.from(svg)).webp({ quality: 70 }).toFile(new URL(`${name}-${index + 1}.webp`, out).pathname);
  }
}
