/** The allowed values of decisions.md, stated once. */
export const articleStatuses = ['draft', 'scheduled', 'published', 'archived'] as const;
export const backlinkStatuses = ['pending', 'live', 'lost'] as const;
export const anchorTypes = ['exact', 'partial', 'branded', 'url', 'generic'] as const;
export const backlinkCategories = ['industry', 'local'] as const;
export const protectedLinkTypes = ['backlink', 'internal'] as const;

export type ArticleStatus = (typeof articleStatuses)[number];
export type BacklinkStatus = (typeof backlinkStatuses)[number];
export type AnchorType = (typeof anchorTypes)[number];
export type BacklinkCategory = (typeof backlinkCategories)[number];

/**
 * `count` with a comma between thousands, as `toLocaleString('en-US')` writes it, without the
 * ICU data: its first use maps megabytes of the node binary into the process for good.
 */
export const withThousands = (count: number): string => String(count).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

/**
 * A name as one line: each run of control characters (CR, LF, tab, NEL …) and line or paragraph
 * separators becomes one space, so that a name never starts a line of its own where it is shown
 * in text (a report e-mail's body, its subject).
 */
export const singleLine = (text: string): string => text.replace(/[\p{Cc}\p{Zl}\p{Zp}]+/gu, ' ').trim();
