import { toTimestamp } from '../core/time.js';

/**
 * The demo data set: a handful of customer accounts, their sites, and 18 months of articles and
 * backlinks relative to `now`. Pure and deterministic: texts come from phrase banks and a seeded
 * PRNG, so the same `now` always yields the same file.
 *
 * Its length is data: the phrase banks of three languages and seven industries, the users and the
 * sites' specifications are two thirds of it; the generator that reads them is the rest.
 */

export interface DemoUser {
  email: string;
  password: string;
  account: string;
  staff: boolean;
}

export interface ImportArticle {
  title: string;
  url: string;
  status: 'draft' | 'scheduled' | 'published' | 'archived';
  published_at: string | null;
  target_keyword: string;
  meta_description: string;
  featured_image_url: string | null;
  body: string;
}

export interface ImportBacklink {
  acquired_at: string;
  source_domain: string;
  source_url: string;
  target_url: string;
  anchor_text: string;
  anchor_type: 'exact' | 'partial' | 'branded' | 'url' | 'generic';
  status: 'pending' | 'live' | 'lost';
  category: 'industry' | 'local';
}

export interface ImportSite {
  owner: string;
  name: string;
  website_url: string;
  language: string;
  country: string;
  geographic_scope: string;
  industry: string;
  articles: ImportArticle[];
  backlinks: ImportBacklink[];
}

export interface ImportFile {
  sites: ImportSite[];
}

type ArticleStatus = ImportArticle['status'];
type AnchorType = ImportBacklink['anchor_type'];
type Category = ImportBacklink['category'];
type Scope = 'local' | 'regional' | 'national' | 'international';

// ---------------------------------------------------------------------------------------------
// Randomness

/** mulberry32: tiny, fast and good enough for demo data; never Math.random. */
class Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in `[min, max]`, both inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('pick from an empty list');
    return items[Math.floor(this.next() * items.length)] as T;
  }

  weighted<T>(entries: readonly (readonly [T, number])[]): T {
    const total = entries.reduce((sum, [, weight]) => sum + weight, 0);
    let roll = this.next() * total;
    for (const [value, weight] of entries) {
      roll -= weight;
      if (roll < 0) return value;
    }
    return this.pick(entries)[0];
  }

  shuffle<T>(items: readonly T[]): T[] {
    const copy = [...items];
    for (let i = copy.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
    }
    return copy;
  }
}

/** FNV-1a, to seed one generator per site and per article from a stable name. */
function seedOf(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** Draws items in shuffled order, reshuffling when used up, so an article rarely repeats itself. */
class Deck<T> {
  private queue: T[] = [];

  constructor(
    private readonly rng: Random,
    private readonly items: readonly T[],
  ) {}

  draw(): T {
    if (this.queue.length === 0) this.queue = this.rng.shuffle(this.items);
    return this.queue.pop() as T;
  }
}

// ---------------------------------------------------------------------------------------------
// Text helpers

const escapeText = (text: string): string =>
  /[&<>]/.test(text) ? text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;') : text;
const escapeAttr = (text: string): string => escapeText(text).replace(/"/g, '&quot;');
const capitalise = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1);

/** Templates split once into literal and `{name}` parts: filling is the hot path of the generator. */
const compiledTemplates = new Map<string, readonly string[]>();

function fill(template: string, vars: Readonly<Record<string, string>>): string {
  let parts = compiledTemplates.get(template);
  if (!parts) {
    parts = template.split(/\{(\w+)\}/);
    compiledTemplates.set(template, parts);
  }
  // split() with a capture group alternates literal and name, starting and ending with a literal.
  let out = parts[0] as string;
  for (let i = 1; i < parts.length; i += 2) {
    const name = parts[i] as string;
    const value = vars[name] ?? `{${name}}`;
    // Spanish contracts a preposition with the article of a subject: "de el puerto" is "del puerto".
    out = value.startsWith('el ') && /(?:^|\s)(?:de|a) $/i.test(out) ? out.slice(0, -1) + value.slice(1) : out + value;
    out += parts[i + 1] as string;
  }
  return out;
}

const transliterations: Readonly<Record<string, string>> = { ä: 'ae', ö: 'oe', ü: 'ue', ß: 'ss', '&': ' and ', '’': '', "'": '' };

function slugify(text: string): string {
  let plain = text.toLowerCase().replace(/[äöüß&’']/g, (c) => transliterations[c] ?? '');
  if (/[^\x00-\x7f]/.test(plain)) plain = plain.normalize('NFD').replace(/[\u0300-\u036f]/g, '');
  return plain.replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
}

const minorWords = new Set(['a', 'an', 'the', 'and', 'or', 'for', 'of', 'in', 'on', 'to', 'at', 'by', 'from', 'as', 'vs.', 'with']);

/** English headline case; words already capitalised (names, acronyms) stay as they are. */
function titleCase(text: string): string {
  return text
    .split(' ')
    .map((word, i) => (i > 0 && minorWords.has(word) ? word : word.split('-').map(capitalise).join('-')))
    .join(' ');
}

/** Meta descriptions stay within 160 code points, cut at a word if a template runs long. */
function clampMeta(text: string): string {
  const chars = [...text];
  if (chars.length <= 160) return text;
  const cut = chars.slice(0, 159).join('');
  return `${cut.slice(0, cut.lastIndexOf(' '))}…`;
}

const hostOf = (url: string): string => new URL(url).hostname;
const byKey = <T extends number | string>(a: T, b: T): number => (a < b ? -1 : a > b ? 1 : 0);
const bareHost = (host: string): string => host.replace(/^www\./, '');

// ---------------------------------------------------------------------------------------------
// Language kits: the phrases every industry of one language shares

type Language = 'en' | 'de' | 'es';

interface LanguageKit {
  /** Title templates: {S} the subject at the start, {s} mid-sentence, {n} a small number. */
  titles: readonly string[];
  /** How a subject is written inside a title. */
  titleSubject: (subject: string, atStart: boolean) => string;
  intros: readonly string[];
  sentences: readonly string[];
  headings: readonly string[];
  subheadings: readonly string[];
  conclusions: readonly string[];
  closers: readonly string[];
  tipLabel: string;
  tableIntros: readonly string[];
  listIntros: readonly string[];
  figcaptions: readonly string[];
  metas: readonly string[];
  /** Sentences that carry a named link: {a} is the link. */
  linkSentences: readonly string[];
  /** Generic anchors, each with the sentence it reads naturally in. */
  genericLinks: readonly (readonly [anchor: string, sentence: string])[];
  genericAnchors: readonly string[];
  partialAnchors: readonly string[];
  internalSentences: readonly string[];
  referenceSentences: readonly string[];
  serviceSentences: readonly string[];
  localDomains: readonly string[];
  localHeadlines: readonly string[];
  industryPaths: readonly string[];
  localPaths: readonly string[];
}

const english: LanguageKit = {
  titles: [
    'A Beginner’s Guide to {s}',
    'Everything You Need to Know About {s}',
    '{n} Common Questions About {s}, Answered',
    'The Truth About {s}',
    '{S}: Costs, Options and What to Expect',
    '{S} Explained: Myths, Facts and Next Steps',
    '{S} in {city}: A Local Guide',
    'Our Team’s Top Tips on {s}',
  ],
  titleSubject: (subject) => titleCase(subject),
  intros: [
    'Questions about {s} are among the most common ones our team at {site} answers.',
    'If you have been wondering about {s}, you are not alone.',
    'When it comes to {s}, a little knowledge goes a long way.',
    'We put this guide together because questions about {s} come up every single week.',
    'Here is a practical, no-nonsense look at {s}.',
    'There is plenty of advice about {s} online, but not all of it holds up.',
  ],
  sentences: [
    'Every situation is different, so treat this as a starting point rather than a strict rule.',
    'The details matter, and a short conversation with an expert can save you time and money.',
    'We hear this question often, so it seemed worth answering properly.',
    'There is a lot of conflicting advice online, and some of it is simply out of date.',
    'Small, consistent steps usually beat one big effort.',
    'If you are unsure, write your questions down beforehand so nothing gets forgotten.',
    'The short answer is that it depends, but there are clear rules of thumb.',
    'Below we walk through the points that matter most in practice.',
  ],
  headings: [
    'The Basics',
    'How It Works in Practice',
    'Common Mistakes to Avoid',
    'What to Expect',
    'Our Practical Tips',
    'When to Ask for Help',
    'A Quick Checklist',
    'Key Facts at a Glance',
  ],
  subheadings: ['In short', 'A note on costs', 'What we recommend', 'Good to know'],
  conclusions: ['The Bottom Line', 'Final Thoughts', 'In Summary', 'Next Steps'],
  closers: [
    'With the right information, decisions about {s} become much less daunting.',
    'Take it one step at a time, and ask when something is unclear.',
    'We hope this guide helps you make a confident decision.',
  ],
  tipLabel: 'Tip:',
  tableIntros: ['Here is a quick overview.', 'The table below sums up the essentials.', 'For reference, here are typical figures.'],
  listIntros: ['A few things make a real difference:', 'Our checklist:', 'Keep these points in mind:'],
  figcaptions: ['{S}: advice from {site}.', 'A closer look at {s}.', 'Photo: {site}'],
  metas: [
    'Everything you need to know about {s}, explained by the team at {site}.',
    '{S}: practical advice, common mistakes and expert tips from {site}.',
    'Our guide to {s} covers costs, timing and what to expect. Written by the team at {site}.',
    'Read our practical guide to {s} and learn what really matters before you decide.',
  ],
  linkSentences: [
    'For a different perspective, see {a}.',
    'Further reading: {a}.',
    'We also recommend the advice on {a}.',
    'If you want to go deeper, have a look at {a}.',
    'Related reading from elsewhere: {a}.',
  ],
  genericLinks: [
    ['here', 'There is a helpful overview of a related topic {a}.'],
    ['this guide', 'We found {a} useful when researching this article.'],
    ['this article', 'For more background, read {a}.'],
    ['Read more', 'Curious about the wider picture? {a}.'],
    ['this page', 'You will find more detail on {a}.'],
    ['learn more', 'Want the full story? You can {a} on a site we trust.'],
  ],
  genericAnchors: ['click here', 'here', 'website', 'read more', 'this article', 'learn more', 'visit site', 'this guide'],
  partialAnchors: ['tips on {k}', 'guide to {k}', '{k} advice', '{k} in {city}', '{k} near me', 'more about {k}', '{k} explained', 'expert {k} help'],
  internalSentences: ['We covered this in more depth in {a}.', 'Related: {a}.', 'See also our article {a}.', 'You may also like {a}.'],
  referenceSentences: ['For independent guidance, see {a}.', 'Official information is available from {a}.'],
  serviceSentences: ['Details and prices are on our {a} page.', 'See our {a} page for availability.'],
  localDomains: ['{c}-business-directory', '{c}news', 'visit-{c}', '{c}-chamber', 'the{c}guide', '{c}-community-hub', '{c}-local-deals'],
  localHeadlines: [
    '{city} small business awards: the shortlist',
    'Meet the local businesses behind {city}’s high street',
    '{industry} in {city}: our readers’ favourites',
    '{site} opens its doors to the community',
    'What’s new in {city} this month',
    'Supporting local: {industry} recommendations',
  ],
  industryPaths: ['/blog/{slug}', '/articles/{yyyy}/{mm}/{slug}', '/resources/{slug}', '/news/{slug}', '/{slug}'],
  localPaths: ['/directory/{category}/{site}', '/listing/{id}-{site}', '/news/{yyyy}/{mm}/{slug}', '/guides/best-{category}-in-{c}', '/community/{slug}'],
};

const german: LanguageKit = {
  titles: [
    '{S}: Alles, was Sie wissen sollten',
    'Häufige Fragen zu {s}',
    'Ratgeber: {S}',
    '{n} Tipps rund um {s}',
    '{S} im Überblick',
    'Wissenswertes über {s}',
    '{S} – Mythen und Fakten',
  ],
  titleSubject: (subject, atStart) => (atStart ? capitalise(subject) : subject),
  intros: [
    'Kaum ein Thema sorgt bei {site} für so viele Fragen wie {s}.',
    'Sie interessieren sich für {s}? Dann sind Sie hier genau richtig.',
    'Bei {s} lohnt sich ein genauer Blick.',
    'Hier finden Sie einen praktischen Überblick über {s} – ohne Fachchinesisch.',
  ],
  sentences: [
    'Jede Situation ist anders – sehen Sie diese Hinweise als Ausgangspunkt, nicht als feste Regel.',
    'Diese Frage hören wir so oft, dass wir ihr einen eigenen Beitrag widmen.',
    'Im Internet kursieren viele widersprüchliche Tipps, und manche davon sind schlicht veraltet.',
    'Kleine, regelmäßige Schritte bringen meist mehr als ein einmaliger großer Aufwand.',
    'Im Folgenden gehen wir die Punkte durch, auf die es in der Praxis ankommt.',
    'Die kurze Antwort: Es kommt darauf an – aber es gibt klare Faustregeln.',
  ],
  headings: ['Das Wichtigste in Kürze', 'Häufige Fehler', 'Unsere Tipps aus der Praxis', 'Worauf Sie achten sollten', 'Auf einen Blick'],
  subheadings: ['Kurz gesagt', 'Unsere Empfehlung', 'Gut zu wissen'],
  conclusions: ['Fazit', 'Zusammengefasst', 'Unser Fazit'],
  closers: [
    'Mit diesem Wissen genießen Sie {s} noch mehr.',
    'Probieren Sie es aus – und fragen Sie uns, wenn etwas unklar ist.',
    'Wir hoffen, dieser Beitrag hilft Ihnen weiter.',
  ],
  tipLabel: 'Tipp:',
  tableIntros: ['Hier ein kurzer Überblick.', 'Die Tabelle fasst das Wichtigste zusammen.'],
  listIntros: ['Darauf kommt es an:', 'Unsere Checkliste:', 'Das sollten Sie beachten:'],
  figcaptions: ['{S}, fotografiert bei {site}.', 'Ein genauer Blick auf {s}.', 'Foto: {site}'],
  metas: [
    'Alles Wichtige über {s} – erklärt vom Team von {site}.',
    '{S}: Tipps, häufige Fehler und Wissenswertes – von {site}.',
    'Unser Ratgeber zu {s}: praktisch, ehrlich und aus der Praxis. Von {site}.',
  ],
  linkSentences: [
    'Weiterführende Informationen: {a}.',
    'Lesenswert dazu ist auch {a}.',
    'Einen anderen Blickwinkel bietet {a}.',
    'Mehr zum Thema finden Sie unter {a}.',
  ],
  genericLinks: [
    ['hier', 'Einen hilfreichen Überblick zu einem verwandten Thema finden Sie {a}.'],
    ['diesen Beitrag', 'Lesenswert ist auch {a}.'],
    ['mehr erfahren', 'Neugierig geworden? Hier können Sie {a}.'],
    ['Website', 'Mehr Informationen gibt es auf dieser {a}.'],
    ['Weiterlesen', 'Noch nicht genug? {a}.'],
  ],
  genericAnchors: ['hier', 'Website', 'mehr erfahren', 'zur Website', 'weiterlesen', 'diesen Beitrag'],
  partialAnchors: ['Tipps zu {k}', 'mehr über {k}', 'Ratgeber {k}', '{k} in {city}', 'alles über {k}', '{k} aus {city}'],
  internalSentences: ['Passend dazu: {a}.', 'Mehr dazu in unserem Beitrag {a}.', 'Ebenfalls interessant: {a}.'],
  referenceSentences: ['Unabhängige Informationen finden Sie zum Beispiel bei {a}.', 'Weitere Hinweise gibt die {a}.'],
  serviceSentences: ['Alle Details finden Sie unter {a}.', 'Mehr dazu auf unserer Seite {a}.'],
  localDomains: ['stadtportal-{c}', '{c}-aktuell', 'branchenbuch-{c}', 'genuss-in-{c}', 'wochenmarkt-{c}', 'mein-{c}'],
  localHeadlines: [
    '{city}: Die Gewinner des Mittelstandspreises',
    'Neu in {city}: Das hat sich getan',
    'Lieblingsorte in {city}',
    '{site} feiert Jubiläum',
    'Regional einkaufen in {city}',
  ],
  industryPaths: ['/blog/{slug}', '/artikel/{yyyy}/{mm}/{slug}', '/ratgeber/{slug}', '/{slug}'],
  localPaths: ['/branchenbuch/{category}/{site}', '/eintrag/{id}-{site}', '/aktuelles/{yyyy}/{mm}/{slug}', '/ratgeber/{slug}'],
};

const spanish: LanguageKit = {
  titles: [
    '{S}: guía práctica',
    'Todo lo que debes saber sobre {s}',
    '{n} consejos sobre {s}',
    'Preguntas frecuentes sobre {s}',
    '{S}: mitos y realidades',
    'Guía completa: {s}',
  ],
  titleSubject: (subject, atStart) => (atStart ? capitalise(subject) : subject),
  intros: [
    'Si estás pensando en {s}, este artículo es para ti.',
    '¿Te interesa {s}? Aquí tienes una guía práctica y sin rodeos.',
    'Con {s}, un poco de información marca la diferencia.',
    'Nos preguntan a menudo por {s}, así que hemos preparado esta guía.',
  ],
  sentences: [
    'Cada viaje es distinto, así que toma estos consejos como punto de partida.',
    'Esta es una de las preguntas que más recibimos, por eso queremos responderla bien.',
    'En internet hay mucha información contradictoria y parte de ella está desactualizada.',
    'A continuación repasamos los puntos más importantes.',
    'Con un poco de planificación, todo resulta mucho más sencillo.',
  ],
  headings: ['Lo más importante', 'Errores frecuentes', 'Nuestros consejos', 'Qué tener en cuenta', 'De un vistazo'],
  subheadings: ['En resumen', 'Nuestra recomendación', 'Bueno saberlo'],
  conclusions: ['Conclusión', 'En resumen', 'Para terminar'],
  closers: [
    'Con esta información, disfrutar de {s} es mucho más fácil.',
    'Esperamos que esta guía te resulte útil.',
    'Y si tienes cualquier duda, pregúntanos: estaremos encantados de ayudarte.',
  ],
  tipLabel: 'Consejo:',
  tableIntros: ['Aquí tienes un resumen rápido.', 'La tabla recoge lo esencial.'],
  listIntros: ['Algunos detalles marcan la diferencia:', 'Nuestra lista de comprobación:', 'Ten en cuenta lo siguiente:'],
  figcaptions: ['{S}, en imágenes.', 'Un vistazo a {s}.', 'Foto: {site}'],
  metas: [
    'Todo lo que necesitas saber sobre {s}, explicado por el equipo de {site}.',
    '{S}: consejos prácticos, errores frecuentes y recomendaciones locales.',
    'Nuestra guía sobre {s}: lo esencial, explicado de forma sencilla. Por {site}.',
  ],
  linkSentences: [
    'Lectura recomendada: {a}.',
    'Puedes ampliar información en {a}.',
    'Otro punto de vista interesante: {a}.',
    'Si quieres profundizar, echa un vistazo a {a}.',
  ],
  genericLinks: [
    ['aquí', 'Tienes una buena explicación sobre un tema relacionado {a}.'],
    ['este artículo', 'Te recomendamos leer {a}.'],
    ['esta guía', 'Consulta {a} para más detalles.'],
    ['sitio web', 'Encontrarás más información en este {a}.'],
    ['Leer más', '¿Quieres saber más? {a}.'],
  ],
  genericAnchors: ['aquí', 'sitio web', 'más información', 'leer más', 'haz clic aquí', 'este artículo'],
  partialAnchors: ['consejos sobre {k}', 'guía de {k}', '{k} en {city}', 'más sobre {k}', 'todo sobre {k}', 'descubre {k}'],
  internalSentences: ['Relacionado: {a}.', 'Lo explicamos en detalle en {a}.', 'También te puede interesar {a}.'],
  referenceSentences: ['Para información oficial, consulta {a}.', 'Más datos prácticos en {a}.'],
  serviceSentences: ['Consulta la sección {a} de nuestra web.', 'Más detalles en {a}.'],
  localDomains: ['guia-{c}', '{c}-hoy', 'turismo-{c}', 'agenda-{c}', 'comercios-de-{c}', '{c}-secreta'],
  localHeadlines: [
    '{city}: los comercios favoritos de nuestros lectores',
    'Novedades en {city} este mes',
    '{site} abre sus puertas',
    'Planes para disfrutar de {city}',
    'Lo mejor de {city} según sus vecinos',
  ],
  industryPaths: ['/blog/{slug}', '/articulos/{yyyy}/{mm}/{slug}', '/guias/{slug}', '/{slug}'],
  localPaths: ['/directorio/{category}/{site}', '/ficha/{id}-{site}', '/noticias/{yyyy}/{mm}/{slug}', '/planes/{slug}'],
};

const kits: Record<Language, LanguageKit> = { en: english, de: german, es: spanish };

// ---------------------------------------------------------------------------------------------
// Industry banks: what one kind of business writes about

interface Table {
  head: readonly string[];
  rows: readonly (readonly string[])[];
}

interface IndustryBank {
  /** Topics, written as they read mid-sentence; they double as target keywords. */
  subjects: readonly string[];
  titles: readonly string[];
  /** Hand-written titles, each with its keyword and the subject its body is about. */
  fixedTitles: readonly (readonly [title: string, keyword: string, subject: string])[];
  sentences: readonly string[];
  headings: readonly string[];
  subheadings: readonly string[];
  listItems: readonly string[];
  tables: readonly Table[];
  quotes: readonly string[];
  /** Calls to action: a sentence and a link to one of the site's own pages. */
  ctas: readonly (readonly [sentence: string, linkText: string, path: string])[];
  references: readonly (readonly [text: string, url: string])[];
  servicePages: readonly (readonly [text: string, path: string])[];
  imageAlts: readonly string[];
  industryDomains: readonly string[];
  /** The slug a local directory files the business under. */
  directoryCategory: string;
  disclaimer?: string;
}

type BankId = 'dental' | 'bakery' | 'saas' | 'hotel' | 'law' | 'plumbing' | 'physio';

const banks: Record<BankId, IndustryBank> = {
  dental: {
    subjects: [
      'dental check-ups',
      'teeth whitening',
      'dental implants',
      'root canal treatment',
      'gum disease',
      'invisible aligners',
      'dental crowns',
      'wisdom teeth removal',
      'sensitive teeth',
      'children’s dental care',
      'dental veneers',
      'emergency dental care',
      'professional teeth cleaning',
      'dental anxiety',
      'tooth-colored fillings',
    ],
    titles: ['What Our Dentists Wish You Knew About {s}', '{S}: What Every Patient Should Know'],
    fixedTitles: [
      ['How Often Should You Get a Dental Check-Up?', 'dental check-up frequency', 'dental check-ups'],
      ['Is Teeth Whitening Safe for Sensitive Teeth?', 'teeth whitening sensitive teeth', 'teeth whitening'],
      ['Dental Implants vs. Bridges: Which Is Right for You?', 'dental implants vs bridges', 'dental implants'],
      ['What to Do in a Dental Emergency', 'dental emergency', 'emergency dental care'],
      ['When Should Your Child First See a Dentist?', 'child first dentist visit', 'children’s dental care'],
      ['Does a Root Canal Hurt? Separating Myth From Fact', 'does a root canal hurt', 'root canal treatment'],
      ['Electric vs. Manual Toothbrush: What Dentists Recommend', 'electric vs manual toothbrush', 'professional teeth cleaning'],
      ['How to Stop Bleeding Gums', 'bleeding gums', 'gum disease'],
      ['Are Invisible Aligners as Effective as Braces?', 'invisible aligners vs braces', 'invisible aligners'],
    ],
    sentences: [
      'Most patients we see about {s} have put off booking for months, and that delay rarely makes things easier.',
      'Regular check-ups let us spot small problems long before they become painful or expensive.',
      'Brushing twice a day with a fluoride toothpaste is still the single most effective habit.',
      'Flossing once a day removes the plaque that a toothbrush simply cannot reach.',
      'If you notice swelling, bleeding or a persistent ache, call the practice rather than waiting for your next appointment.',
      'Modern techniques have made {s} far more comfortable than ever before.',
      'Your dentist will explain every option, including the cost, before any treatment starts.',
      'Many dental insurance plans cover at least part of the cost, so it is worth checking your policy first.',
      'Children copy what they see, so brushing together is one of the easiest habits to build.',
      'Sugary drinks between meals do more damage than most people expect.',
      'Digital X-rays use a fraction of the radiation of older film and give us a much clearer picture.',
      'We always start with a conversation about your goals, your budget and any worries you have.',
      'Good home care between visits makes the biggest difference to long-term results.',
      'Nervous patients are welcome to ask for longer appointments, breaks or a hand signal to pause.',
      'Smoking and vaping both slow healing and raise the risk of gum problems.',
      'At {site}, we keep same-day slots free for urgent cases every weekday.',
      'Questions about {s} come up in almost every consultation we hold.',
      'A visit every six months is usually enough for adults with healthy teeth and gums.',
    ],
    headings: ['What Happens at the Appointment', 'Aftercare and Recovery', 'Keeping Your Smile Healthy at Home', 'Signs You Should Book a Visit'],
    subheadings: ['Before your visit', 'During treatment', 'Afterwards', 'For children', 'If you are nervous'],
    listItems: [
      'Brush twice a day for two minutes',
      'Floss or use interdental brushes daily',
      'Cut down on sugary snacks between meals',
      'Replace your toothbrush every three months',
      'Drink water after coffee, tea or wine',
      'Book a check-up every six months',
      'Wear a mouthguard for contact sports',
      'Tell us about any medication you take',
      'Don’t ignore bleeding gums',
      'Ask about fluoride varnish for children',
    ],
    tables: [
      {
        head: ['Treatment', 'Typical duration', 'How often'],
        rows: [
          ['Check-up and clean', '30–45 minutes', 'Every 6 months'],
          ['In-office whitening', '60–90 minutes', 'Every 1–2 years'],
          ['Filling', '20–60 minutes', 'As needed'],
          ['Root canal treatment', '60–90 minutes', 'Once per tooth'],
          ['Dental implant', '3–6 months in total', 'Once'],
        ],
      },
    ],
    quotes: [
      '“I put off coming in for two years. I wish I had booked sooner.” – a patient at {site}',
      '“The team explained everything and I never felt rushed.” – patient review',
    ],
    ctas: [
      ['Ready for your next check-up?', 'Book an appointment online', '/book-appointment'],
      ['Have a question about {s}?', 'Send us a message', '/contact'],
    ],
    references: [
      ['American Dental Association', 'https://www.ada.org/'],
      ['MouthHealthy', 'https://www.mouthhealthy.org/'],
      ['CDC', 'https://www.cdc.gov/'],
    ],
    servicePages: [
      ['teeth whitening', '/services/teeth-whitening'],
      ['dental implants', '/services/dental-implants'],
      ['emergency dentist', '/services/emergency-dentist'],
      ['new patients', '/new-patients'],
    ],
    imageAlts: ['Dentist explaining {s} to a patient', 'Bright, modern treatment room at {site}', 'Close-up of a healthy smile'],
    industryDomains: [
      'dentalhealthnews.example',
      'smilemagazine.example',
      'oralcare-today.example',
      'thedentalblog.example',
      'familyhealthhub.example',
      'toothtalk.example',
      'dentist-directory.example',
      'wellness-weekly.example',
    ],
    directoryCategory: 'dentists',
    disclaimer: 'This article is general information and does not replace a personal examination.',
  },
  bakery: {
    subjects: [
      'Sauerteigbrot',
      'Dinkelbrötchen',
      'Laugenbrezeln',
      'Vollkornbrot',
      'Hochzeitstorten',
      'Christstollen',
      'Roggenbrot',
      'Bauernbrot',
      'Schwarzwälder Kirschtorte',
      'Apfelstrudel',
      'Osterzopf',
      'Pflaumenkuchen',
      'Zimtschnecken',
      'Holzofenbrot',
    ],
    titles: ['{S}: Tipps vom Bäckermeister', '{S} aus der Backstube: So machen wir es'],
    fixedTitles: [
      ['Wie lange bleibt Sauerteigbrot frisch?', 'sauerteigbrot haltbarkeit', 'Sauerteigbrot'],
      ['Warum Brot vom Bäcker anders schmeckt', 'brot vom bäcker', 'Holzofenbrot'],
      ['Dinkel oder Weizen: Was ist bekömmlicher?', 'dinkel oder weizen', 'Dinkelbrötchen'],
      ['Brot richtig einfrieren und auftauen', 'brot einfrieren', 'Bauernbrot'],
      ['Die perfekte Brezel: Unser Geheimnis', 'brezel backen', 'Laugenbrezeln'],
      ['Hochzeitstorte bestellen: Der richtige Zeitplan', 'hochzeitstorte bestellen', 'Hochzeitstorten'],
      ['Was bedeutet eigentlich lange Teigführung?', 'lange teigführung', 'Sauerteigbrot'],
    ],
    sentences: [
      'Unser Sauerteig wird seit über dreißig Jahren jeden Tag aufs Neue gefüttert.',
      'Eine lange Teigführung von bis zu 48 Stunden sorgt für Geschmack und Bekömmlichkeit.',
      'Wir verwenden Mehl aus Mühlen der Region, die meisten davon liegen keine 50 Kilometer entfernt.',
      'Brot bleibt am längsten frisch, wenn es in einem Leinenbeutel oder Brottopf lagert.',
      'Im Kühlschrank wird Brot schneller altbacken als bei Zimmertemperatur.',
      'Bei {s} kommt es vor allem auf gute Zutaten und ausreichend Zeit an.',
      'Unsere Bäckerinnen und Bäcker beginnen ihren Arbeitstag bereits um zwei Uhr nachts.',
      'Dinkel enthält ebenfalls Gluten und ist daher für Menschen mit Zöliakie nicht geeignet.',
      'Zusatzstoffe und Fertigmischungen haben in unserer Backstube keinen Platz.',
      'Saisonale Früchte aus dem Umland bestimmen, welche Kuchen in der Theke stehen.',
      'Viele Kundinnen und Kunden fragen uns nach {s} – deshalb erklären wir es hier ausführlich.',
      'Eine knusprige Kruste entsteht durch Dampf in den ersten Minuten im Ofen.',
      'Vorbestellungen für Feiertage nehmen wir gern bis drei Tage im Voraus entgegen.',
      'Wer Brot einfrieren möchte, schneidet es am besten vorher in Scheiben.',
      'In {city} beliefern wir außerdem Cafés, Kantinen und Wochenmärkte.',
      'Bei {site} backen wir nach Rezepten, die teils über drei Generationen weitergegeben wurden.',
    ],
    headings: ['So entsteht es in unserer Backstube', 'Zutaten und Herkunft', 'Richtig lagern und genießen', 'Tradition und Handwerk'],
    subheadings: ['Der Teig', 'Die Gare', 'Im Ofen', 'Zu Hause', 'Für Allergiker'],
    listItems: [
      'Brot im Leinenbeutel oder Brottopf lagern',
      'Nicht im Kühlschrank aufbewahren',
      'Die Anschnittseite nach unten legen',
      'Zum Einfrieren vorher in Scheiben schneiden',
      'Brötchen kurz aufbacken für die perfekte Kruste',
      'Torten mindestens zwei Wochen vorher bestellen',
      'Bei Allergien nach der Zutatenliste fragen',
      'Für Feiertage früh vorbestellen',
      'Regionale und saisonale Produkte bevorzugen',
    ],
    tables: [
      {
        head: ['Brotsorte', 'Mehl', 'Teigführung', 'Frisch für'],
        rows: [
          ['Sauerteigbrot', 'Roggen und Weizen', '24 Stunden', '4–5 Tage'],
          ['Dinkelvollkorn', 'Dinkelvollkorn', '18 Stunden', '3–4 Tage'],
          ['Bauernbrot', 'Roggenmischmehl', '20 Stunden', '4–5 Tage'],
          ['Baguette', 'Weizen', '36 Stunden', '1 Tag'],
          ['Roggenvollkorn', 'Roggenschrot', '24 Stunden', '6–7 Tage'],
        ],
      },
    ],
    quotes: [
      '„Das beste Sauerteigbrot der ganzen Stadt – und das seit Jahren.“ – Stammkundin',
      '„Unsere Hochzeitstorte war ein Traum, geschmacklich wie optisch.“ – Kundin aus {city}',
    ],
    ctas: [
      ['Lust auf frisches Brot?', 'Jetzt online vorbestellen', '/vorbestellen'],
      ['Fragen zu {s}?', 'Schreiben Sie uns', '/kontakt'],
    ],
    references: [
      ['Verbraucherzentrale', 'https://www.verbraucherzentrale.de/'],
      ['Bundeszentrum für Ernährung', 'https://www.bzfe.de/'],
    ],
    servicePages: [
      ['Brot & Brötchen', '/sortiment/brot'],
      ['Torten auf Bestellung', '/sortiment/torten'],
      ['Unsere Filialen', '/filialen'],
    ],
    imageAlts: ['{S} frisch aus dem Ofen', 'Blick in die Backstube von {site}', 'Bäckerin beim Formen des Teigs'],
    industryDomains: [
      'brotblog.example',
      'backen-lernen.example',
      'genussmagazin.example',
      'handwerk-heute.example',
      'foodies-deutschland.example',
      'regional-einkaufen.example',
      'baeckerzeitung.example',
    ],
    directoryCategory: 'baeckereien',
  },
  saas: {
    subjects: [
      'invoice automation',
      'recurring billing',
      'late payment reminders',
      'cash flow forecasting',
      'expense tracking',
      'multi-currency invoicing',
      'sales tax and VAT',
      'accounts receivable',
      'payment terms',
      'bookkeeping for freelancers',
      'online payments',
      'financial reporting',
      'bank reconciliation',
      'quotes and estimates',
    ],
    titles: ['How Small Businesses Use {s} to Get Paid Faster', '{n} {S} Mistakes That Cost You Money', 'The Founder’s Guide to {s}'],
    fixedTitles: [
      ['How to Write an Invoice That Gets Paid on Time', 'how to write an invoice', 'invoice automation'],
      ['Net 30 vs. Net 15: Choosing Payment Terms', 'net 30 payment terms', 'payment terms'],
      ['What Is Accounts Receivable Turnover?', 'accounts receivable turnover', 'accounts receivable'],
      ['Freelancer Invoice Template: What to Include', 'freelancer invoice template', 'bookkeeping for freelancers'],
      ['How to Politely Ask a Client for Payment', 'ask client for payment', 'late payment reminders'],
      ['Cash vs. Accrual Accounting for Small Businesses', 'cash vs accrual accounting', 'financial reporting'],
      ['How to Handle Partial Payments', 'partial payments', 'online payments'],
    ],
    sentences: [
      'Late payments are still the number one cash flow problem for small businesses.',
      'Automating the routine work frees up hours every month for work that actually grows the business.',
      'Clear payment terms on every invoice set expectations before a problem can appear.',
      'A friendly reminder three days before the due date prevents a surprising number of late payments.',
      'With {s} set up properly, most of the follow-up happens without anyone lifting a finger.',
      'In {site}, you can switch this on from the settings page in under a minute.',
      'Your accountant will thank you for clean, consistent records at the end of the year.',
      'Offering several payment methods, including card and bank transfer, shortens the time to payment.',
      'The same numbering scheme and layout on every invoice builds trust with clients.',
      'Tax rules differ between countries, so always check the local requirements or ask an adviser.',
      'Dashboards are only useful if someone looks at them, so schedule a weekly ten-minute review.',
      'Teams that review {s} monthly tend to catch problems while they are still small.',
      'Integrations with your bank and payment provider remove most manual data entry.',
      'Start simple: one workflow that works is worth more than five that nobody maintains.',
      'Many of our customers tell us that getting {s} right made the biggest difference in their first year.',
      'Keep an audit trail of every change so you can answer questions months later.',
    ],
    headings: ['Setting It Up Step by Step', 'How to Measure Success', 'Where Automation Helps Most', 'A Real-World Example'],
    subheadings: ['Step 1: Get the basics right', 'Step 2: Automate the routine', 'Step 3: Review monthly', 'For freelancers', 'For growing teams'],
    listItems: [
      'Send invoices on the day the work is delivered',
      'State the due date clearly, not only the terms',
      'Add a direct payment link to every invoice',
      'Set up automatic reminders before and after the due date',
      'Reconcile your bank account weekly',
      'Tag expenses as you go, not at year end',
      'Use one numbering scheme across all invoices',
      'Review overdue accounts every Monday',
      'Export a monthly report for your accountant',
    ],
    tables: [
      {
        head: ['Plan', 'Users', 'Invoices per month', 'Price'],
        rows: [
          ['Starter', '1', '50', '$12/month'],
          ['Growth', '5', '500', '$39/month'],
          ['Scale', '20', 'Unlimited', '$99/month'],
          ['Enterprise', 'Unlimited', 'Unlimited', 'Custom'],
        ],
      },
      {
        head: ['Payment terms', 'Typical use', 'Average days to pay'],
        rows: [
          ['Due on receipt', 'Small one-off jobs', '9'],
          ['Net 15', 'Freelancers and agencies', '18'],
          ['Net 30', 'B2B services', '34'],
          ['Net 60', 'Large enterprise clients', '67'],
        ],
      },
    ],
    quotes: [
      '“We cut our average time to payment from 41 to 19 days in the first quarter.” – operations lead at a design studio',
      '“Reminders used to be the most awkward part of my week. Now I never think about them.” – freelance developer',
    ],
    ctas: [
      ['Want to see it in action?', 'Start a free 14-day trial', '/signup'],
      ['Questions about {s}?', 'Talk to our team', '/contact'],
    ],
    references: [
      ['U.S. Small Business Administration', 'https://www.sba.gov/'],
      ['IRS', 'https://www.irs.gov/'],
      ['GOV.UK business guidance', 'https://www.gov.uk/browse/business'],
    ],
    servicePages: [
      ['invoicing', '/features/invoicing'],
      ['recurring billing', '/features/recurring-billing'],
      ['pricing', '/pricing'],
      ['integrations', '/integrations'],
    ],
    imageAlts: ['Dashboard showing {s} in {site}', 'Small business owner reviewing invoices on a laptop', 'Chart of monthly cash flow'],
    industryDomains: [
      'saas-weekly.example',
      'smallbizfinance.example',
      'freelancerhub.example',
      'startupstack.example',
      'fintechdigest.example',
      'accounting-tools-review.example',
      'productivitypicks.example',
      'bootstrapped-founders.example',
      'thecfocorner.example',
    ],
    directoryCategory: 'software-companies',
  },
  hotel: {
    subjects: [
      'escapadas de fin de semana',
      'la playa de la Malvarrosa',
      'la paella valenciana',
      'la Ciudad de las Artes y las Ciencias',
      'el casco antiguo',
      'las Fallas',
      'rutas en bicicleta',
      'la Albufera',
      'viajes en familia',
      'el puerto de Valencia',
      'el Mercado Central',
      'el teletrabajo junto al mar',
      'bodas junto al mar',
    ],
    titles: ['{S}: consejos de nuestro equipo de recepción', 'Descubre {s} desde el {site}'],
    fixedTitles: [
      ['Qué ver en Valencia en dos días', 'qué ver en valencia en dos días', 'el casco antiguo'],
      ['Cuándo es la mejor época para visitar Valencia', 'mejor época para visitar valencia', 'escapadas de fin de semana'],
      ['Dónde comer la mejor paella de Valencia', 'dónde comer paella valencia', 'la paella valenciana'],
      ['Cómo llegar del aeropuerto al centro de Valencia', 'aeropuerto valencia centro', 'el puerto de Valencia'],
      ['Valencia con niños: planes para toda la familia', 'valencia con niños', 'viajes en familia'],
      ['Las mejores playas cerca de Valencia', 'playas cerca de valencia', 'la playa de la Malvarrosa'],
    ],
    sentences: [
      'Valencia disfruta de más de 300 días de sol al año, así que casi cualquier época es buena para visitarla.',
      'Desde el hotel, la playa está a menos de diez minutos a pie.',
      'Nuestro equipo de recepción estará encantado de recomendarte restaurantes y reservar mesa por ti.',
      'En verano conviene reservar con antelación, sobre todo los fines de semana.',
      'El metro y el tranvía conectan el puerto con el centro histórico en unos veinte minutos.',
      'Alquilar una bicicleta es la forma más cómoda de recorrer el antiguo cauce del Turia.',
      'Para disfrutar de {s}, lo mejor es madrugar y evitar las horas de más calor.',
      'La auténtica paella valenciana lleva pollo, conejo, judía verde y garrofó.',
      'Muchos huéspedes nos preguntan por {s}, así que hemos reunido aquí nuestras recomendaciones.',
      'En el {site} servimos el desayuno con productos locales hasta las once de la mañana.',
      'Los atardeceres en la Albufera son uno de los espectáculos más bonitos de la región.',
      'Si viajas con niños, pide en recepción nuestra lista de planes familiares.',
      'Marzo es el mes de las Fallas: la ciudad se llena de color, música y pólvora.',
      'La terraza del hotel es el lugar perfecto para terminar el día con vistas al mar.',
      'La tarjeta turística incluye el transporte público y descuentos en museos.',
    ],
    headings: ['Cómo llegar', 'Cuándo ir', 'Dónde comer', 'Nuestras recomendaciones desde el hotel'],
    subheadings: ['Por la mañana', 'Por la tarde', 'Con niños', 'En pareja', 'Si llueve'],
    listItems: [
      'Reserva con antelación en temporada alta',
      'Lleva protector solar incluso en primavera',
      'Prueba la horchata con fartons',
      'Usa la tarjeta de transporte público',
      'Visita el Mercado Central por la mañana',
      'Reserva mesa para la paella con un día de antelación',
      'Alquila una bicicleta para recorrer el Turia',
      'Consulta el calendario de festivos locales',
      'Disfruta del atardecer desde la terraza',
    ],
    tables: [
      {
        head: ['Mes', 'Temperatura media', 'Ambiente', 'Recomendación'],
        rows: [
          ['Marzo', '17 °C', 'Fallas', 'Reservar con meses de antelación'],
          ['Mayo', '22 °C', 'Tranquilo', 'Ideal para pasear'],
          ['Agosto', '30 °C', 'Muy animado', 'Playa a primera hora'],
          ['Octubre', '23 °C', 'Tranquilo', 'Buena relación calidad-precio'],
          ['Diciembre', '13 °C', 'Navideño', 'Visitas culturales'],
        ],
      },
    ],
    quotes: [
      '«Las vistas desde la terraza y la atención del personal, inmejorables.» – huésped',
      '«Repetiremos seguro: ubicación perfecta y un desayuno buenísimo.» – familia de Madrid',
    ],
    ctas: [
      ['¿Planeando tu viaje?', 'Reserva directamente en nuestra web', '/reservas'],
      ['¿Tienes dudas sobre {s}?', 'Escríbenos', '/contacto'],
    ],
    references: [
      ['Visit Valencia', 'https://www.visitvalencia.com/'],
      ['Metrovalencia', 'https://www.metrovalencia.es/'],
    ],
    servicePages: [
      ['Habitaciones', '/habitaciones'],
      ['Restaurante', '/restaurante'],
      ['Ofertas', '/ofertas'],
    ],
    imageAlts: ['Vista de {s}', 'Terraza del {site} al atardecer', 'Habitación con vistas al mar'],
    industryDomains: [
      'viajeros-blog.example',
      'escapadas-hoy.example',
      'guia-hoteles.example',
      'turismo-y-ocio.example',
      'mediterraneo-viajes.example',
      'revista-viajar.example',
      'gastronomia-espana.example',
    ],
    directoryCategory: 'hoteles',
  },
  law: {
    subjects: [
      'making a will',
      'lasting power of attorney',
      'divorce and separation',
      'child arrangements',
      'buying a property',
      'employment disputes',
      'unfair dismissal',
      'probate',
      'settlement agreements',
      'personal injury claims',
      'prenuptial agreements',
      'landlord and tenant disputes',
      'commercial contracts',
      'mediation',
    ],
    titles: ['{S}: A Plain-English Guide', 'What Our Solicitors Wish Clients Knew About {s}', '{S} in England and Wales: Your Questions Answered'],
    fixedTitles: [
      ['Do I Need a Solicitor to Make a Will?', 'do i need a solicitor for a will', 'making a will'],
      ['How Long Does Probate Take in England?', 'how long does probate take', 'probate'],
      ['What Is a Settlement Agreement?', 'settlement agreement', 'settlement agreements'],
      ['Can I Be Dismissed Without a Warning?', 'dismissed without warning', 'unfair dismissal'],
      ['How Are Assets Divided in a Divorce?', 'divorce asset division', 'divorce and separation'],
      ['What Happens If You Die Without a Will?', 'dying without a will', 'making a will'],
      ['No-Fault Divorce Explained', 'no-fault divorce', 'divorce and separation'],
      ['Conveyancing Timeline: From Offer to Completion', 'conveyancing timeline', 'buying a property'],
    ],
    sentences: [
      'The law in this area changes more often than most people realise, so older advice can be misleading.',
      'An initial conversation costs nothing and often clarifies what you actually need.',
      'Keep copies of every letter, email and document; they can matter a great deal later.',
      'Deadlines in legal matters are often strict, and missing one can limit your options.',
      'Most disputes are resolved without ever reaching a courtroom.',
      'Mediation is usually quicker, cheaper and less stressful than going to court.',
      'We explain our fees in writing before any work begins, so there are no surprises.',
      'Every family is different, and a good solution reflects that.',
      'When it comes to {s}, the order in which you do things can matter as much as what you do.',
      'Our solicitors at {site} have handled hundreds of matters involving {s}.',
      'The rules in Scotland and Northern Ireland differ, so this guide focuses on England and Wales.',
      'A clear written agreement prevents most misunderstandings before they start.',
      'If the other side has instructed a solicitor, it is wise to get advice of your own.',
      'Time limits for some employment claims are as short as three months less one day.',
      'Getting the paperwork right first time saves weeks of back-and-forth.',
    ],
    headings: ['What the Law Says', 'How the Process Works', 'Costs and Funding Options', 'How We Can Help'],
    subheadings: ['Step 1: Initial consultation', 'Step 2: Gathering documents', 'Step 3: Negotiation', 'If you cannot agree', 'Time limits'],
    listItems: [
      'Your full name, address and date of birth',
      'Copies of any relevant contracts or agreements',
      'A timeline of key events',
      'Details of the other party',
      'Any correspondence you have already received',
      'Information about assets and debts',
      'Your payslips and employment contract',
      'Names of any witnesses',
      'The questions you want answered',
    ],
    tables: [
      {
        head: ['Matter', 'Typical timescale', 'Fee basis'],
        rows: [
          ['Simple will', '2–3 weeks', 'Fixed fee'],
          ['Lasting power of attorney', '8–16 weeks incl. registration', 'Fixed fee'],
          ['Probate (no dispute)', '6–12 months', 'Fixed or hourly'],
          ['Uncontested divorce', '6–8 months', 'Fixed fee'],
          ['Settlement agreement review', '1–2 weeks', 'Often paid by the employer'],
        ],
      },
    ],
    quotes: [
      '“They explained every step in plain English and never made us feel rushed.” – client review',
      '“A difficult time made much easier by a team that genuinely cared.” – family law client',
    ],
    ctas: [
      ['Need advice on {s}?', 'Book a free initial call', '/contact'],
      ['Want to talk it through?', 'Arrange a consultation', '/book-consultation'],
    ],
    references: [
      ['GOV.UK', 'https://www.gov.uk/'],
      ['Citizens Advice', 'https://www.citizensadvice.org.uk/'],
      ['Acas', 'https://www.acas.org.uk/'],
    ],
    servicePages: [
      ['wills and probate', '/services/wills-and-probate'],
      ['family law', '/services/family-law'],
      ['employment law', '/services/employment-law'],
      ['conveyancing', '/services/conveyancing'],
    ],
    imageAlts: ['Solicitor discussing {s} with a client', 'Meeting room at {site}', 'Signing documents at a desk'],
    industryDomains: [
      'lawyer-directory-uk.example',
      'familylawweekly.example',
      'propertyinsider-uk.example',
      'hrnews-today.example',
      'moneywise-guides.example',
      'legal-matters-blog.example',
      'solicitor-finder.example',
    ],
    directoryCategory: 'solicitors',
    disclaimer: 'This article is general information, not legal advice for your situation.',
  },
  plumbing: {
    subjects: [
      'blocked drains',
      'hot water systems',
      'leaking taps',
      'burst pipes',
      'gas fitting',
      'blocked toilets',
      'low water pressure',
      'heat pump hot water',
      'bathroom renovations',
      'backflow prevention',
      'leak detection',
      'emergency plumbing',
      'solar hot water',
    ],
    titles: ['{S}: A Homeowner’s Guide', 'What a Licensed Plumber Wants You to Know About {s}', '{S} in {city}: Costs and Common Fixes'],
    fixedTitles: [
      ['Why Is My Hot Water Running Out So Fast?', 'hot water running out', 'hot water systems'],
      ['How to Unblock a Drain Without Chemicals', 'unblock drain without chemicals', 'blocked drains'],
      ['Gas vs. Electric vs. Heat Pump Hot Water', 'heat pump vs gas hot water', 'heat pump hot water'],
      ['What to Do When a Pipe Bursts', 'burst pipe what to do', 'burst pipes'],
      ['How Long Should a Hot Water System Last?', 'hot water system lifespan', 'hot water systems'],
      ['Signs You Have a Hidden Water Leak', 'hidden water leak signs', 'leak detection'],
      ['Do You Need a Plumber for a Dripping Tap?', 'dripping tap repair', 'leaking taps'],
    ],
    sentences: [
      'A dripping tap can waste thousands of litres of water a year.',
      'Tree roots are behind a large share of the blocked drains we see in older suburbs.',
      'Turning off the mains water is the first thing to do when a pipe bursts.',
      'All gas work in Australia must be done by a licensed gas fitter.',
      'Most hot water systems last between eight and twelve years with regular servicing.',
      'Chemical drain cleaners can damage older pipes and rarely fix the underlying problem.',
      'A CCTV drain camera shows us exactly where the blockage is, so we only dig where we have to.',
      'Upfront, fixed pricing means you know the cost before we start.',
      'Our vans carry the most common parts, so most jobs are finished in a single visit.',
      'With {s}, small warning signs usually show up weeks before a real failure.',
      'Heat pumps use a fraction of the energy of a conventional electric system.',
      'Government rebates can reduce the cost of an efficient hot water upgrade.',
      'Knowing where your water meter and shut-off valve are can save you a lot of damage.',
      'The team at {site} answers calls around the clock for genuine emergencies.',
      'Low water pressure is often caused by a faulty pressure-limiting valve rather than the pipes.',
      'Regular maintenance costs far less than an emergency call-out on a Sunday night.',
    ],
    headings: ['Common Causes', 'What You Can Safely Do Yourself', 'When to Call a Licensed Plumber', 'Costs and Rebates'],
    subheadings: ['Quick checks', 'Warning signs', 'Older homes', 'Newer builds', 'After hours'],
    listItems: [
      'Find your water mains tap before you need it',
      'Use a drain strainer in the kitchen sink',
      'Never pour fat or oil down the drain',
      'Check the relief valve on your hot water system every six months',
      'Look for damp patches on walls and ceilings',
      'Watch your water bill for sudden jumps',
      'Keep wet wipes out of the toilet',
      'Book a hot water service every few years',
      'Ask for a written quote before work starts',
    ],
    tables: [
      {
        head: ['System type', 'Upfront cost', 'Running cost', 'Typical lifespan'],
        rows: [
          ['Electric storage', 'Low', 'High', '8–12 years'],
          ['Gas continuous flow', 'Medium', 'Medium', '15–20 years'],
          ['Heat pump', 'Medium–high', 'Low', '10–15 years'],
          ['Solar (boosted)', 'High', 'Very low', '15–20 years'],
        ],
      },
      {
        head: ['Problem', 'Likely cause', 'Urgency'],
        rows: [
          ['Gurgling drains', 'Partial blockage or venting issue', 'Book this week'],
          ['No hot water', 'Failed element or pilot light', 'Same day'],
          ['Water on the floor', 'Leaking pipe or valve', 'Call now'],
          ['Smell of gas', 'Gas leak', 'Leave the house and call now'],
        ],
      },
    ],
    quotes: [
      '“On site within the hour and fixed on the first visit. Can’t ask for more.” – customer in {city}',
      '“Clear quote, tidy work, and they even cleaned up afterwards.” – homeowner',
    ],
    ctas: [
      ['Got a plumbing problem?', 'Book a plumber online', '/book'],
      ['Not sure what you need?', 'Ask us for a free quote', '/contact'],
    ],
    references: [
      ['Your Home', 'https://www.yourhome.gov.au/'],
      ['energy.gov.au', 'https://www.energy.gov.au/'],
    ],
    servicePages: [
      ['blocked drains', '/services/blocked-drains'],
      ['hot water', '/services/hot-water'],
      ['gas fitting', '/services/gas-fitting'],
      ['service areas', '/service-areas'],
    ],
    imageAlts: ['Plumber working on {s}', 'Service van of {site}', 'New hot water system installed in a laundry'],
    industryDomains: [
      'tradies-directory.example',
      'homeimprovement-au.example',
      'renovate-right.example',
      'builders-digest.example',
      'the-home-handbook.example',
      'energy-saving-homes.example',
      'plumbing-trade-news.example',
    ],
    directoryCategory: 'plumbers',
  },
  physio: {
    subjects: [
      'lower back pain',
      'sports injuries',
      'neck pain',
      'knee rehabilitation',
      'running injuries',
      'shoulder pain',
      'posture at work',
      'post-surgery rehabilitation',
      'ankle sprains',
      'clinical Pilates',
      'sciatica',
      'tennis elbow',
      'hamstring injuries',
    ],
    titles: ['{S}: What Actually Helps', 'A Physio’s Guide to {s}', '{S}: Exercises, Myths and Recovery Times'],
    fixedTitles: [
      ['Should You Use Ice or Heat for an Injury?', 'ice or heat for injury', 'sports injuries'],
      ['How Long Does a Sprained Ankle Take to Heal?', 'sprained ankle recovery time', 'ankle sprains'],
      ['Is It Safe to Exercise With Back Pain?', 'exercise with back pain', 'lower back pain'],
      ['How to Set Up Your Desk to Avoid Neck Pain', 'desk setup neck pain', 'posture at work'],
      ['Do You Need a Referral to See a Physio?', 'physio referral', 'sports injuries'],
      ['Returning to Running After Injury', 'return to running after injury', 'running injuries'],
    ],
    sentences: [
      'Most back pain settles within six weeks, and staying gently active helps it settle faster.',
      'Complete rest is rarely the answer; the right kind of movement usually is.',
      'A thorough assessment looks at how you move, not only where it hurts.',
      'Pain is a signal worth listening to, but it does not always mean damage.',
      'Small daily exercises at home often matter more than the time spent in the clinic.',
      'We will always explain what we find and agree a plan with you before starting treatment.',
      'Recovery from {s} is rarely a straight line, and setbacks are normal.',
      'Sleep, stress and general fitness all influence how quickly an injury heals.',
      'Strength training is one of the best tools we have for preventing injuries from coming back.',
      'If pain is getting worse, wakes you at night or comes with numbness, get it checked promptly.',
      'At {site}, most first appointments last around 45 minutes.',
      'Many health insurance plans cover physiotherapy, so check your policy before your visit.',
      'Increasing training load gradually is the simplest way to avoid overuse injuries.',
      'Good posture is less about sitting perfectly still and more about changing position often.',
      'Manual therapy can ease pain in the short term, but exercise does the long-term work.',
    ],
    headings: ['What Causes It', 'How Physiotherapy Helps', 'Exercises You Can Try at Home', 'When to See a Professional'],
    subheadings: ['Week one', 'Weeks two to six', 'Getting back to sport', 'At your desk', 'Red flags'],
    listItems: [
      'Keep moving within a comfortable range',
      'Warm up for at least ten minutes before sport',
      'Increase training volume by no more than 10% a week',
      'Take a short break from your desk every 30 minutes',
      'Sleep seven to nine hours a night',
      'Do your home exercises little and often',
      'Replace running shoes every 600–800 km',
      'Write down what makes the pain better or worse',
      'Ask us before trying a new sport',
    ],
    tables: [
      {
        head: ['Injury', 'Typical recovery', 'Physio sessions'],
        rows: [
          ['Mild ankle sprain', '2–4 weeks', '2–3'],
          ['Acute low back pain', '2–6 weeks', '3–5'],
          ['Tennis elbow', '6–12 weeks', '4–6'],
          ['ACL reconstruction', '9–12 months', '20+'],
          ['Hamstring strain', '3–8 weeks', '3–6'],
        ],
      },
    ],
    quotes: [
      '“After months of back pain I was running again within eight weeks.” – patient',
      '“Finally someone explained what was actually going on.” – client at {site}',
    ],
    ctas: [
      ['Struggling with {s}?', 'Book an assessment online', '/book'],
      ['Not sure if physio is right for you?', 'Send us a question', '/contact'],
    ],
    references: [
      ['HSE', 'https://www2.hse.ie/'],
      ['the Irish Society of Chartered Physiotherapists', 'https://www.iscp.ie/'],
    ],
    servicePages: [
      ['sports physio', '/services/sports-physio'],
      ['back pain', '/services/back-pain'],
      ['clinical Pilates', '/services/pilates'],
    ],
    imageAlts: ['Physiotherapist assessing {s}', 'Treatment room at {site}', 'Patient doing a guided strength exercise'],
    industryDomains: [
      'runners-club-blog.example',
      'sportsmed-journal.example',
      'healthyback-blog.example',
      'active-living-ireland.example',
      'fitness-and-recovery.example',
      'pilates-weekly.example',
    ],
    directoryCategory: 'physiotherapists',
    disclaimer: 'This article is general information and does not replace an individual assessment.',
  },
};

// ---------------------------------------------------------------------------------------------
// Accounts and sites

const mainUser: DemoUser = { email: 'demo@anchorage.test', password: 'demo-password-2026', account: 'Anchorage Demo Agency', staff: false };

/** The main demo user comes first: the demo loader signs in with it. */
const demoUsers: readonly DemoUser[] = [
  mainUser,
  { email: 'olivia@brightsmile.test', password: 'brightsmile-demo-2026', account: 'BrightSmile Dental Group', staff: false },
  { email: 'james@hartleycrane.test', password: 'hartleycrane-demo-2026', account: 'Hartley & Crane LLP', staff: false },
  { email: 'jack@matesplumbing.test', password: 'matesplumbing-demo-2026', account: 'Mates Plumbing & Gas Pty Ltd', staff: false },
  { email: 'aoife@harbourphysio.test', password: 'harbourphysio-demo-2026', account: 'Harbour Physiotherapy Ltd', staff: false },
  { email: 'nina@partnernetwork.test', password: 'partnernetwork-demo-2026', account: 'Partner Network Media', staff: false },
  { email: 'staff@anchorage.test', password: 'staff-password-2026', account: 'Anchorage staff', staff: true },
];

interface SiteSpec {
  owner: string;
  name: string;
  /** Other names the business goes by, for branded anchors. */
  brands: readonly string[];
  websiteUrl: string;
  language: Language;
  country: string;
  scope: Scope;
  industry: string;
  bank: BankId;
  city: string;
  articles: number;
  /** Backlinks from outside the network; links from other demo sites' articles come on top. */
  externalBacklinks: number;
}

const siteSpecs: readonly SiteSpec[] = [
  {
    owner: mainUser.email,
    name: 'Riverside Family Dental',
    brands: ['Riverside Dental', 'Riverside Family Dental Portland'],
    websiteUrl: 'https://www.riversidefamilydental.example',
    language: 'en',
    country: 'US',
    scope: 'local',
    industry: 'Dental clinic',
    bank: 'dental',
    city: 'Portland',
    articles: 52,
    externalBacklinks: 170,
  },
  {
    owner: mainUser.email,
    name: 'Hofmanns Backstube',
    brands: ['Bäckerei Hofmann', 'Hofmann Freiburg'],
    websiteUrl: 'https://www.hofmanns-backstube.example',
    language: 'de',
    country: 'DE',
    scope: 'local',
    industry: 'Bakery',
    bank: 'bakery',
    city: 'Freiburg',
    articles: 46,
    externalBacklinks: 140,
  },
  {
    owner: mainUser.email,
    name: 'Ledgerly',
    brands: ['Ledgerly invoicing', 'Ledgerly app'],
    websiteUrl: 'https://www.ledgerly.example',
    language: 'en',
    country: 'US',
    scope: 'international',
    industry: 'Software (SaaS)',
    bank: 'saas',
    city: 'Denver',
    articles: 60,
    externalBacklinks: 230,
  },
  {
    owner: mainUser.email,
    name: 'Hotel Mirador del Puerto',
    brands: ['Mirador del Puerto', 'Hotel Mirador Valencia'],
    websiteUrl: 'https://www.hotelmiradordelpuerto.example',
    language: 'es',
    country: 'ES',
    scope: 'regional',
    industry: 'Hotel',
    bank: 'hotel',
    city: 'Valencia',
    articles: 48,
    externalBacklinks: 160,
  },
  {
    owner: 'olivia@brightsmile.test',
    name: 'BrightSmile Dental',
    brands: ['BrightSmile', 'BrightSmile Dental Austin'],
    websiteUrl: 'https://www.brightsmile.example',
    language: 'en',
    country: 'US',
    scope: 'regional',
    industry: 'Dental clinic',
    bank: 'dental',
    city: 'Austin',
    articles: 50,
    externalBacklinks: 180,
  },
  {
    owner: 'olivia@brightsmile.test',
    name: 'BrightSmile Dental Round Rock',
    brands: ['BrightSmile Round Rock', 'BrightSmile'],
    websiteUrl: 'https://roundrock.brightsmile.example',
    language: 'en',
    country: 'US',
    scope: 'local',
    industry: 'Dental clinic',
    bank: 'dental',
    city: 'Round Rock',
    articles: 40,
    externalBacklinks: 120,
  },
  {
    owner: 'james@hartleycrane.test',
    name: 'Hartley & Crane Solicitors',
    brands: ['Hartley & Crane', 'Hartley and Crane'],
    websiteUrl: 'https://www.hartleycrane.example',
    language: 'en',
    country: 'GB',
    scope: 'national',
    industry: 'Law firm',
    bank: 'law',
    city: 'London',
    articles: 55,
    externalBacklinks: 200,
  },
  {
    owner: 'james@hartleycrane.test',
    name: 'Hartley & Crane Family Law',
    brands: ['Hartley & Crane Manchester', 'Hartley & Crane'],
    websiteUrl: 'https://family.hartleycrane.example',
    language: 'en',
    country: 'GB',
    scope: 'regional',
    industry: 'Family law',
    bank: 'law',
    city: 'Manchester',
    articles: 42,
    externalBacklinks: 130,
  },
  {
    owner: 'jack@matesplumbing.test',
    name: 'Mates Plumbing & Gas',
    brands: ['Mates Plumbing', 'Mates Plumbing Parramatta'],
    websiteUrl: 'https://www.matesplumbing.example',
    language: 'en',
    country: 'AU',
    scope: 'local',
    industry: 'Plumbing',
    bank: 'plumbing',
    city: 'Parramatta',
    articles: 48,
    externalBacklinks: 150,
  },
  {
    owner: 'jack@matesplumbing.test',
    name: 'Coastal Hot Water Co',
    brands: ['Coastal Hot Water', 'Coastal Hot Water Newcastle'],
    websiteUrl: 'https://www.coastalhotwater.example',
    language: 'en',
    country: 'AU',
    scope: 'regional',
    industry: 'Plumbing',
    bank: 'plumbing',
    city: 'Newcastle',
    articles: 40,
    externalBacklinks: 120,
  },
  {
    owner: 'aoife@harbourphysio.test',
    name: 'Harbour Physiotherapy',
    brands: ['Harbour Physio', 'Harbour Physio Cork'],
    websiteUrl: 'https://www.harbourphysio.example',
    language: 'en',
    country: 'IE',
    scope: 'local',
    industry: 'Physiotherapy',
    bank: 'physio',
    city: 'Cork',
    articles: 45,
    externalBacklinks: 140,
  },
  // Partner sites: every site has a neighbour of its own industry or area to link with.
  {
    owner: 'nina@partnernetwork.test',
    name: 'Freiburger Brotzeit',
    brands: ['Brotzeit Freiburg'],
    websiteUrl: 'https://www.freiburger-brotzeit.example',
    language: 'de',
    country: 'DE',
    scope: 'local',
    industry: 'Bakery',
    bank: 'bakery',
    city: 'Freiburg',
    articles: 14,
    externalBacklinks: 30,
  },
  {
    owner: 'nina@partnernetwork.test',
    name: 'Tallybook',
    brands: ['Tallybook App'],
    websiteUrl: 'https://www.tallybook.example',
    language: 'en',
    country: 'US',
    scope: 'national',
    industry: 'Software (SaaS)',
    bank: 'saas',
    city: 'Chicago',
    articles: 14,
    externalBacklinks: 30,
  },
  {
    owner: 'nina@partnernetwork.test',
    name: 'Hostal Brisa de Valencia',
    brands: ['Hostal Brisa'],
    websiteUrl: 'https://www.hostalbrisa.example',
    language: 'es',
    country: 'ES',
    scope: 'local',
    industry: 'Hotel',
    bank: 'hotel',
    city: 'Valencia',
    articles: 14,
    externalBacklinks: 30,
  },
  {
    owner: 'nina@partnernetwork.test',
    name: 'Cork Sports Physio',
    brands: ['Cork Sports Physiotherapy'],
    websiteUrl: 'https://www.corksportsphysio.example',
    language: 'en',
    country: 'IE',
    scope: 'local',
    industry: 'Physiotherapy',
    bank: 'physio',
    city: 'Cork',
    articles: 14,
    externalBacklinks: 30,
  },
];

// ---------------------------------------------------------------------------------------------
// Dates

const dayMs = 86_400_000;
const floorSecond = (ms: number): number => ms - (((ms % 1000) + 1000) % 1000);

/** A working-hours time on a random day in `[from, to]`; falls back to any second when the range is tight. */
function publishTime(rng: Random, from: number, to: number): number {
  const day = new Date(from + rng.next() * (to - from));
  const ms = Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate(), rng.int(7, 16), rng.pick([0, 15, 30, 45]));
  return ms >= from && ms <= to ? ms : floorSecond(from + rng.next() * (to - from));
}

/** Instants (epoch ms, UTC) the data set is laid out on: 18 months up to now. */
interface Timeline {
  now: number;
  start: number;
  monthStart: number;
  previousMonthStart: number;
}

function timelineOf(now: Date): Timeline {
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  return {
    now: floorSecond(now.getTime()),
    start: Date.UTC(y, m - 18, now.getUTCDate(), now.getUTCHours(), now.getUTCMinutes()),
    monthStart: Date.UTC(y, m, 1),
    previousMonthStart: Date.UTC(y, m - 1, 1),
  };
}

// ---------------------------------------------------------------------------------------------
// Planning: titles, urls and dates of every article before any body is written

interface ArticlePlan {
  title: string;
  slug: string;
  url: string;
  subject: string;
  keyword: string;
  status: ArticleStatus;
  published: number | null;
}

interface SitePlan {
  spec: SiteSpec;
  kit: LanguageKit;
  bank: IndustryBank;
  host: string;
  key: string;
  articles: ArticlePlan[];
  /** The trade's two demo images, served by the service under /assets/demo/: featured, then in the body. */
  images: readonly [string, string];
  /** The published articles, oldest first. */
  live: ArticlePlan[];
}

function subjectVars(spec: SiteSpec, subject: string): Record<string, string> {
  return { site: spec.name, city: spec.city, s: subject, S: capitalise(subject) };
}

const usesCity = (template: string): boolean => template.includes('{city}');
const localScope = (scope: Scope): boolean => scope === 'local' || scope === 'regional';
/** Two local businesses of one country: a link between them is local, whatever their trades. */
const sameArea = (a: SiteSpec, b: SiteSpec): boolean => a.country === b.country && localScope(a.scope) && localScope(b.scope);

type PlannedTitle = Omit<ArticlePlan, 'status' | 'published' | 'url'>;

function plannedTitles(rng: Random, spec: SiteSpec, kit: LanguageKit, bank: IndustryBank): PlannedTitle[] {
  const chosen: PlannedTitle[] = [];
  const slugs = new Set<string>();
  const offer = (title: string, subject: string, keyword: string): void => {
    const slug = slugify(title);
    if (slugs.has(slug) || chosen.length === spec.articles) return;
    slugs.add(slug);
    chosen.push({ title, subject, keyword, slug });
  };
  for (const [title, keyword, subject] of bank.fixedTitles) if (rng.chance(0.75)) offer(title, subject, keyword);
  // Round-robin over subjects so every topic gets its share of articles.
  const templates = [...kit.titles, ...bank.titles].filter((t) => localScope(spec.scope) || !usesCity(t));
  const perSubject = bank.subjects.map((subject) => ({ subject, templates: rng.shuffle(templates) }));
  for (let round = 0; round < templates.length && chosen.length < spec.articles; round++) {
    for (const { subject, templates: order } of rng.shuffle(perSubject)) {
      const vars = {
        site: spec.name,
        city: spec.city,
        s: kit.titleSubject(subject, false),
        S: kit.titleSubject(subject, true),
        n: String(rng.int(5, 9)),
      };
      const keyword = localScope(spec.scope) && rng.chance(0.35) ? `${subject} ${spec.city}` : subject;
      offer(fill(order[round] as string, vars), subject, keyword.toLowerCase());
    }
  }
  return chosen;
}

function planSite(spec: SiteSpec, timeline: Timeline, publicUrl: string): SitePlan {
  const rng = new Random(seedOf(spec.websiteUrl));
  const kit = kits[spec.language];
  const bank = banks[spec.bank];
  const titles = rng.shuffle(plannedTitles(rng, spec, kit, bank));
  const drafts = Math.max(2, Math.round(titles.length * 0.07));
  const scheduled = Math.max(2, Math.round(titles.length * 0.05));
  const archived = Math.max(1, Math.round(titles.length * 0.04));
  const thisMonth = 2;
  const lastMonth = 3;
  const archiveEnd = timeline.start + 300 * dayMs;
  const articles = titles.map((t, i): ArticlePlan => {
    const base = { ...t, url: `${spec.websiteUrl}/blog/${t.slug}` };
    if (i < drafts) return { ...base, status: 'draft', published: null };
    if (i < drafts + scheduled) {
      const day = new Date(timeline.now + rng.int(1, 29) * dayMs);
      const ms = Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate(), rng.int(7, 16), rng.pick([0, 30]));
      // Any time on a later calendar day is after now, and day 29 at 16:30 is within 30 days.
      return { ...base, status: 'scheduled', published: ms };
    }
    if (i < drafts + scheduled + archived) return { ...base, status: 'archived', published: publishTime(rng, timeline.start, archiveEnd) };
    const n = i - drafts - scheduled - archived;
    const published =
      n < thisMonth
        ? publishTime(rng, timeline.monthStart, timeline.now)
        : n < thisMonth + lastMonth
          ? publishTime(rng, timeline.previousMonthStart, timeline.monthStart - 1000)
          : publishTime(rng, timeline.start, timeline.previousMonthStart - 1000);
    return { ...base, status: 'published', published };
  });
  // Chronological, unpublished drafts last; slugs break ties without depending on a locale.
  articles.sort((a, b) => byKey(a.published ?? Infinity, b.published ?? Infinity) || byKey(a.slug, b.slug));
  const live = articles.filter((a) => a.status === 'published');
  const images = [1, 2].map((n) => `${publicUrl}/assets/demo/${spec.bank}-${n}.webp`) as [string, string];
  return { spec, kit, bank, host: hostOf(spec.websiteUrl), key: slugify(spec.name), articles, images, live };
}

// ---------------------------------------------------------------------------------------------
// Anchors

const sameLanguageAnchors: readonly (readonly [AnchorType, number])[] = [
  ['exact', 22],
  ['partial', 30],
  ['branded', 23],
  ['url', 12],
  ['generic', 13],
];
const crossLanguageAnchors: readonly (readonly [AnchorType, number])[] = [
  ['branded', 60],
  ['url', 40],
];

/** Where a link into a site lands, and what that page is about. */
interface Landing {
  url: string;
  /** The target keyword of the landing page, when it has one. */
  keyword: string | null;
  /** The subject of the landing page; null for the home page, which is about everything. */
  topic: string | null;
}

/** Anchor text of a link to `site`; generic anchors are chosen by the caller, who knows the sentence. */
function namedAnchor(rng: Random, type: Exclude<AnchorType, 'generic'>, site: SitePlan, landed: Landing): string {
  const subject = landed.topic ?? rng.pick(site.bank.subjects);
  switch (type) {
    case 'exact':
      if (landed.keyword !== null) return landed.keyword;
      return (localScope(site.spec.scope) && rng.chance(0.4) ? `${subject} ${site.spec.city}` : subject).toLowerCase();
    case 'partial': {
      const templates = site.kit.partialAnchors.filter((t) => localScope(site.spec.scope) || !usesCity(t));
      return fill(rng.pick(templates), { k: subject, city: site.spec.city });
    }
    case 'branded':
      return rng.pick([site.spec.name, ...site.spec.brands]);
    case 'url':
      return rng.pick([bareHost(site.host), site.host, `${site.spec.websiteUrl}/`]);
  }
}

/** Where a link into `site` lands: one of its articles live by `at`, its home page, or a service page. */
function landing(rng: Random, site: SitePlan, at: number): Landing {
  let liveByThen = 0;
  while (liveByThen < site.live.length && (site.live[liveByThen].published ?? Infinity) <= at) liveByThen++;
  const roll = rng.next();
  if (roll < 0.55 && liveByThen > 0) {
    const article = site.live[rng.int(0, liveByThen - 1)];
    return { url: article.url, keyword: article.keyword, topic: article.subject };
  }
  if (roll < 0.8) return { url: `${site.spec.websiteUrl}/`, keyword: null, topic: null };
  const [name, path] = rng.pick(site.bank.servicePages);
  return { url: `${site.spec.websiteUrl}${path}`, keyword: null, topic: name };
}

// ---------------------------------------------------------------------------------------------
// Bodies

interface NetworkLink {
  source: SitePlan;
  article: ArticlePlan;
  target: SitePlan;
  href: string;
  anchor: string;
  type: AnchorType;
}

type Block = { kind: 'p'; sentences: string[] } | { kind: 'html'; html: string };

const link = (href: string, text: string, extra = ''): string => `<a href="${escapeAttr(href)}"${extra}>${escapeText(text)}</a>`;

/** A sentence template with `{a}` replaced by ready-made link HTML; the rest is escaped text. */
function linkSentence(template: string, anchorHtml: string): string {
  const [before = '', after = ''] = template.split('{a}');
  return `${escapeText(before)}${anchorHtml}${escapeText(after)}`;
}

/** Sites an article links to: of the same trade, or neighbours in the same area (a backlink's source must fit its target). */
function pickTargets(rng: Random, site: SitePlan, sites: readonly SitePlan[], count: number): SitePlan[] {
  const pool = sites
    .filter((s) => s !== site && (s.spec.bank === site.spec.bank || sameArea(s.spec, site.spec)))
    .map((s): readonly [SitePlan, number] => [s, s.spec.bank === site.spec.bank ? 4 : 2]);
  const chosen: SitePlan[] = [];
  while (chosen.length < Math.min(count, pool.length)) {
    const remaining = pool.filter(([s]) => !chosen.includes(s));
    chosen.push(rng.weighted(remaining));
  }
  return chosen;
}

function writeBody(site: SitePlan, article: ArticlePlan, sites: readonly SitePlan[], now: number): { body: string; links: NetworkLink[] } {
  const rng = new Random(seedOf(article.url));
  const { kit, bank, spec } = site;
  const vars = subjectVars(spec, article.subject);
  const sentences = new Deck(rng, [...kit.sentences, ...bank.sentences]);
  const headings = new Deck(rng, [...kit.headings, ...bank.headings]);
  const subheadings = new Deck(rng, [...kit.subheadings, ...bank.subheadings]);
  const say = (): string => escapeText(fill(sentences.draw(), vars));
  const text = (template: string): string => escapeText(fill(template, vars));
  const blocks: Block[] = [];
  const html = (markup: string): void => {
    blocks.push({ kind: 'html', html: markup });
  };
  const paragraph = (count: number): void => {
    blocks.push({ kind: 'p', sentences: Array.from({ length: count }, say) });
  };

  blocks.push({ kind: 'p', sentences: [text(rng.pick(kit.intros)), say(), say()] });
  const src = site.images[1];
  const alt = escapeAttr(fill(rng.pick(bank.imageAlts), vars));
  const image = `<img src="${src}" alt="${alt}" width="960" height="540" loading="lazy" />`;
  html(rng.chance(0.65) ? `<figure>${image}<figcaption>${text(rng.pick(kit.figcaptions))}</figcaption></figure>` : `<p>${image}</p>`);

  let tableLeft = rng.chance(0.45);
  let quoteLeft = rng.chance(0.35);
  const sections = rng.int(3, 4);
  for (let i = 0; i < sections; i++) {
    html(`<h2>${text(headings.draw())}</h2>`);
    const shape = rng.pick(['prose', 'list', 'steps', 'table', 'quote', 'tip'] as const);
    if (shape === 'list') {
      paragraph(1);
      html(`<p>${text(rng.pick(kit.listIntros))}</p>`);
      const tag = rng.chance(0.6) ? 'ul' : 'ol';
      const items = rng.shuffle(bank.listItems).slice(0, rng.int(3, 5));
      html(`<${tag}>${items.map((item) => `<li>${escapeText(item)}</li>`).join('')}</${tag}>`);
    } else if (shape === 'steps') {
      for (let k = 0; k < 2; k++) {
        html(`<h3>${text(subheadings.draw())}</h3>`);
        paragraph(2);
      }
    } else if (shape === 'table' && tableLeft) {
      tableLeft = false;
      const table = rng.pick(bank.tables);
      paragraph(2);
      html(`<p>${text(rng.pick(kit.tableIntros))}</p>`);
      const head = `<thead><tr>${table.head.map((h) => `<th>${escapeText(h)}</th>`).join('')}</tr></thead>`;
      const rows = table.rows.map((row) => `<tr>${row.map((cell) => `<td>${escapeText(cell)}</td>`).join('')}</tr>`).join('');
      html(`<table>${head}<tbody>${rows}</tbody></table>`);
    } else if (shape === 'quote' && quoteLeft) {
      quoteLeft = false;
      paragraph(2);
      html(`<blockquote>${text(rng.pick(bank.quotes))}</blockquote>`);
    } else if (shape === 'tip') {
      paragraph(2);
      html(`<p><strong>${escapeText(kit.tipLabel)}</strong> ${say()}</p>`);
    } else {
      paragraph(3);
      if (rng.chance(0.5)) paragraph(2);
    }
  }

  // Links go into the body paragraphs written so far, never into the closing call to action.
  const insertInto = blocks.flatMap((b) => (b.kind === 'p' ? [b] : []));
  const place = (sentence: string): void => {
    const target = rng.pick(insertInto);
    target.sentences.splice(rng.int(1, target.sentences.length), 0, sentence);
  };

  const effective = article.published ?? now;
  const links: NetworkLink[] = [];
  for (const target of pickTargets(rng, site, sites, rng.weighted([[1, 35], [2, 45], [3, 20]] as const))) {
    const landed = landing(rng, target, Math.min(effective, now));
    const type = rng.weighted(target.spec.language === spec.language ? sameLanguageAnchors : crossLanguageAnchors);
    const [anchor, sentence] =
      type === 'generic' ? rng.pick(kit.genericLinks) : [namedAnchor(rng, type, target, landed), rng.pick(kit.linkSentences)];
    place(linkSentence(sentence, link(landed.url, anchor, ' data-service-protected="backlink"')));
    links.push({ source: site, article, target, href: landed.url, anchor, type });
  }

  const earlier = site.live.filter((a) => a !== article && (a.published ?? Infinity) < effective);
  for (const other of rng.shuffle(earlier).slice(0, rng.int(0, 2))) {
    const anchor = rng.chance(0.5) ? other.title : other.subject;
    place(linkSentence(rng.pick(kit.internalSentences), link(`/blog/${other.slug}`, anchor, ' data-service-protected="internal"')));
  }
  if (rng.chance(0.6)) {
    const [name, url] = rng.pick(bank.references);
    place(linkSentence(rng.pick(kit.referenceSentences), link(url, name, ' target="_blank" rel="noopener"')));
  }
  if (rng.chance(0.5)) {
    const [name, path] = rng.pick(bank.servicePages);
    place(linkSentence(rng.pick(kit.serviceSentences), link(path, name)));
  }

  if (rng.chance(0.2)) html('<hr />');
  html(`<h2>${text(rng.pick(kit.conclusions))}</h2>`);
  paragraph(1);
  const [cta, linkText, path] = rng.pick(bank.ctas);
  html(`<p>${text(rng.pick(kit.closers))} ${text(cta)} ${link(path, linkText)}.</p>`);
  if (bank.disclaimer && rng.chance(0.6)) html(`<p><em>${escapeText(bank.disclaimer)}</em></p>`);

  const body = blocks.map((b) => (b.kind === 'p' ? `<p>${b.sentences.join(' ')}</p>` : b.html)).join('\n');
  return { body, links };
}

function toImportArticle(site: SitePlan, article: ArticlePlan, body: string): ImportArticle {
  const rng = new Random(seedOf(`${article.url}#meta`));
  const withImage = article.status === 'draft' ? rng.chance(0.5) : rng.chance(0.93);
  return {
    title: article.title,
    url: article.url,
    status: article.status,
    published_at: article.published === null ? null : toTimestamp(new Date(article.published)),
    target_keyword: article.keyword,
    meta_description: clampMeta(fill(rng.pick(site.kit.metas), subjectVars(site.spec, article.subject))),
    featured_image_url: withImage ? site.images[0] : null,
    body,
  };
}

// ---------------------------------------------------------------------------------------------
// Backlinks

interface DatedBacklink {
  at: number;
  backlink: ImportBacklink;
}

function statusAt(rng: Random, at: number, now: number): ImportBacklink['status'] {
  if (now - at < 21 * dayMs) return rng.chance(0.4) ? 'pending' : 'live';
  return rng.weighted([
    ['live', 86],
    ['lost', 11],
    ['pending', 3],
  ] as const);
}

/** A backlink for every protected link in a live article of another demo site. */
function networkBacklink(network: NetworkLink, now: number): DatedBacklink {
  const rng = new Random(seedOf(`${network.article.url}→${network.href}`));
  // Found by the crawler up to three days after the article went live, never after now.
  const published = network.article.published ?? now;
  const delay = rng.int(0, 72 * 3600) * 1000;
  const at = published + delay <= now ? published + delay : floorSecond(published + rng.next() * (now - published));
  const { source, target } = network;
  const status = network.article.status === 'archived' ? 'lost' : statusAt(rng, at, now);
  return {
    at,
    backlink: {
      acquired_at: toTimestamp(new Date(at)),
      source_domain: bareHost(source.host),
      source_url: network.article.url,
      target_url: network.href,
      anchor_text: network.anchor,
      anchor_type: network.type,
      status,
      category: sameArea(source.spec, target.spec) ? 'local' : 'industry',
    },
  };
}

const localShare: Record<Scope, number> = { local: 0.65, regional: 0.45, national: 0.2, international: 0.08 };

function externalBacklinks(site: SitePlan, timeline: Timeline): DatedBacklink[] {
  const rng = new Random(seedOf(`${site.spec.websiteUrl}#backlinks`));
  const { spec, kit, bank } = site;
  const citySlug = slugify(spec.city);
  const localDomains = kit.localDomains.map((d) => `${fill(d, { c: citySlug })}.example`);
  // Slugs of the pages that link: local news and guides, or industry articles on one of our subjects.
  const localSlugs = kit.localHeadlines.map((h) => slugify(fill(h, { site: spec.name, city: spec.city, industry: spec.industry })));
  const industrySlugs = kit.titles.flatMap((t, i) =>
    bank.subjects.map((s) => slugify(fill(t, { ...subjectVars(spec, s), n: String(5 + i) }))),
  );
  const seen = new Set<string>();
  const result: DatedBacklink[] = [];
  for (let i = 0; i < spec.externalBacklinks; i++) {
    // A few reserved for this and last month, the rest growing towards now as the campaign ramps up.
    const at =
      i < 3
        ? floorSecond(timeline.monthStart + rng.next() * (timeline.now - timeline.monthStart))
        : i < 11
          ? floorSecond(timeline.previousMonthStart + rng.next() * (timeline.monthStart - 1000 - timeline.previousMonthStart))
          : floorSecond(timeline.start + Math.sqrt(rng.next()) * (timeline.now - timeline.start));
    const category: Category = rng.chance(localShare[spec.scope]) ? 'local' : 'industry';
    const domain = category === 'local' ? rng.pick(localDomains) : rng.pick(bank.industryDomains);
    const date = new Date(at);
    const pathVars = {
      yyyy: String(date.getUTCFullYear()),
      mm: String(date.getUTCMonth() + 1).padStart(2, '0'),
      category: bank.directoryCategory,
      site: site.key,
      c: citySlug,
      id: String(rng.int(1000, 99999)),
      slug: rng.pick(category === 'local' ? localSlugs : industrySlugs),
    };
    const host = rng.chance(0.6) ? `www.${domain}` : domain;
    let sourceUrl = `https://${host}${fill(rng.pick(category === 'local' ? kit.localPaths : kit.industryPaths), pathVars)}`;
    if (seen.has(sourceUrl)) sourceUrl = `${sourceUrl}-${pathVars.id}`;
    seen.add(sourceUrl);
    const landed = landing(rng, site, at);
    const type = rng.weighted(sameLanguageAnchors);
    result.push({
      at,
      backlink: {
        acquired_at: toTimestamp(date),
        source_domain: domain,
        source_url: sourceUrl,
        target_url: landed.url,
        anchor_text: type === 'generic' ? rng.pick(kit.genericAnchors) : namedAnchor(rng, type, site, landed),
        anchor_type: type,
        status: statusAt(rng, at, timeline.now),
        category,
      },
    });
  }
  return result;
}

// ---------------------------------------------------------------------------------------------

/**
 * The demo users and the import file of their sites, articles and backlinks, dated relative to
 * `now`; images are the service's own, under `publicUrl`.
 */
export function demoDataSet(now: Date, publicUrl: string): { users: DemoUser[]; file: ImportFile } {
  const timeline = timelineOf(now);
  const sites = siteSpecs.map((spec) => planSite(spec, timeline, publicUrl));
  const incoming = new Map<SitePlan, DatedBacklink[]>(sites.map((s) => [s, externalBacklinks(s, timeline)]));
  const articles = new Map<SitePlan, ImportArticle[]>();
  for (const site of sites) {
    const written = site.articles.map((article) => {
      const { body, links } = writeBody(site, article, sites, timeline.now);
      // Only pages that are (or were) online have given their targets a backlink.
      if (article.status === 'published' || article.status === 'archived') {
        for (const l of links) incoming.get(l.target)?.push(networkBacklink(l, timeline.now));
      }
      return toImportArticle(site, article, body);
    });
    articles.set(site, written);
  }
  const file: ImportFile = {
    sites: sites.map((site) => ({
      owner: site.spec.owner,
      name: site.spec.name,
      website_url: site.spec.websiteUrl,
      language: site.spec.language,
      country: site.spec.country,
      geographic_scope: site.spec.scope,
      industry: site.spec.industry,
      articles: articles.get(site) ?? [],
      backlinks: (incoming.get(site) ?? [])
        .sort((a, b) => byKey(a.at, b.at) || byKey(a.backlink.source_url, b.backlink.source_url))
        .map((d) => d.backlink),
    })),
  };
  return { users: demoUsers.map((u) => ({ ...u })), file };
}

/**
 * Where a site's backlinks may come from: industry backlinks from its trade's publications or a
 * network site of the same trade, local ones from its city's pages or a neighbour in its area.
 */
export function fittingSources(websiteUrl: string): { industry: string[]; local: string[] } {
  const spec = siteSpecs.find((s) => s.websiteUrl === websiteUrl);
  if (!spec) return { industry: [], local: [] };
  const others = siteSpecs.filter((s) => s !== spec);
  const hosts = (list: SiteSpec[]) => list.map((s) => bareHost(hostOf(s.websiteUrl)));
  return {
    industry: [...banks[spec.bank].industryDomains, ...hosts(others.filter((s) => s.bank === spec.bank))],
    local: [
      ...kits[spec.language].localDomains.map((d) => `${fill(d, { c: slugify(spec.city) })}.example`),
      ...hosts(others.filter((s) => sameArea(s, spec))),
    ],
  };
}
