import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * Research bookmarks (src/research/), each private to its user, and the news sources users requested
 * (src/news/), public but keeping who asked to themselves. Both compare addresses by their normalised
 * key (src/web-address.ts), which the unique indexes enforce.
 */
export const name = '0006-research-news';

export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.createTable('research_bookmarks', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    user_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'users', key: 'id' }, onDelete: 'CASCADE' },
    title: { type: DataTypes.STRING(300), allowNull: false },
    url: { type: DataTypes.STRING(2048), allowNull: false },
    url_key: { type: DataTypes.STRING(2048), allowNull: false },
    source: { type: DataTypes.STRING(200), allowNull: true },
    notes: { type: DataTypes.TEXT, allowNull: true },
    created_at: { type: DataTypes.DATE, allowNull: false },
  });
  // A user saves a page once; the index also serves the per-user list.
  await queryInterface.addIndex('research_bookmarks', ['user_id', 'url_key'], { name: 'research_bookmarks_user_url', unique: true });

  await queryInterface.createTable('news_sources', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    name: { type: DataTypes.STRING(200), allowNull: false },
    url: { type: DataTypes.STRING(2048), allowNull: false },
    url_key: { type: DataTypes.STRING(2048), allowNull: false, unique: true },
    status: { type: DataTypes.STRING(20), allowNull: false, defaultValue: 'requested' },
    // Who asked: never exposed; kept (null once the account is deleted) for review and abuse handling.
    requested_by: { type: DataTypes.INTEGER, allowNull: true, references: { model: 'users', key: 'id' }, onDelete: 'SET NULL' },
    requested_at: { type: DataTypes.DATE, allowNull: false },
    updated_at: { type: DataTypes.DATE, allowNull: false },
  });
  await queryInterface.addIndex('news_sources', ['requested_by'], { name: 'news_sources_requested_by' });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  for (const table of ['news_sources', 'research_bookmarks']) await queryInterface.dropTable(table);
}
