/**
 * The change notices a node listens to (PostgreSQL) or counts (SQLite): the channel and the topics
 * that the triggers of migrations 013, 017, 018, 025 and 027 fire. Those migrations keep their own copies.
 *
 * `keys`: the API keys a node has looked up (a key or its user changed or went); `sites`: the
 * sites it has read; `articles`: the articles it has answered with; `tokens`: the OAuth access
 * tokens it has accepted (a token or its connection changed or went).
 */
export const changesChannel = 'anchorage_changes';

export const changeTopics = ['keys', 'sites', 'articles', 'tokens'] as const;
export type ChangeTopic = (typeof changeTopics)[number];

/** Changes a watch names at most at once (`Db.watchArticleChanges`): past that, anything may have changed. */
export const namedChangesMax = 1_000;
