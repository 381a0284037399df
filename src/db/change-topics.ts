/**
 * The change notices a node listens to (PostgreSQL) or counts (SQLite): the channel and the topics
 * that the triggers of migrations 013, 017 and 018 fire. Those migrations keep their own copies.
 *
 * `keys`: the API keys a node has looked up (a key or its user changed or went); `sites`: the
 * sites it has read; `articles`: the articles it has answered with.
 */
export const changesChannel = 'anchorage_changes';

export const changeTopics = ['keys', 'sites', 'articles'] as const;
export type ChangeTopic = (typeof changeTopics)[number];
