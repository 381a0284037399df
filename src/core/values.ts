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
