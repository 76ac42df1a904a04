import { DataTypes, QueryTypes, type QueryInterface } from 'sequelize';
import { consentKindFromText } from '@palanque/rules/consent-sources';

/**
 * Consent that can be shown, and contacts kept no longer than the campaign (issue 42, section 5;
 * src/messaging/contacts.ts, contact-retention.ts):
 * - `contacts.consent_kind`: the structured source (packages/rules/src/consent-sources.ts CONSENT_KINDS), and
 *   `contacts.consent_evidence`, the record that shows a manual or imported consent. Existing rows keep
 *   their free-text `consent_source` as it is; their kind is read from its words where they name one
 *   (consentKindFromText: "Ficha de voluntários" is `form`, "Comício" `event`, "SMS" `inbound_message`).
 *   A text that says the list was bought or came from a third party gets `purchased_list` or
 *   `third_party_list`, which counts as no consent (a campaign to it is warned about or refused as
 *   `consent_missing`). The rest keep a null kind: their consent still counts, and the next write of
 *   the contact (createContact, an import line) must say its kind.
 * - `contact_retention`: per entity, the erasure of its contacts after the certification (diplomação)
 *   of the winners of its election: the notice sent to its admins, the erasure done, and a hold placed
 *   by a platform admin while proceedings are pending (CF art. 14 §10).
 * The opt-out suppression (migration 0034) is not touched: the erasure keeps it.
 */
export const name = '0036-contact-consent-retention';

/** SQLite's down rebuilds contacts, which others reference (ON DELETE CASCADE): foreign key enforcement off, or the rebuild would delete their rows (src/db/migration-transaction.ts). */
export const sqliteForeignKeys = 'off';

export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.addColumn('contacts', 'consent_kind', { type: DataTypes.STRING(24), allowNull: true });
  await queryInterface.addColumn('contacts', 'consent_evidence', { type: DataTypes.TEXT, allowNull: true });
  // The distinct texts, not the rows: a campaign's import gives thousands of rows a handful of texts.
  const sources = await queryInterface.sequelize.query<{ consent_source: string }>('SELECT DISTINCT consent_source FROM contacts WHERE consent_source IS NOT NULL', { type: QueryTypes.SELECT });
  for (const { consent_source: source } of sources) {
    const kind = consentKindFromText(source);
    if (kind) await queryInterface.sequelize.query('UPDATE contacts SET consent_kind = ? WHERE consent_source = ? AND consent_kind IS NULL', { replacements: [kind, source] });
  }

  await queryInterface.createTable('contact_retention', {
    entity_id: { type: DataTypes.INTEGER, primaryKey: true, references: { model: 'entities', key: 'id' }, onDelete: 'CASCADE' },
    // The day the entity's contacts are (or were) erased, and the certification day it was counted from.
    certification_on: { type: DataTypes.DATEONLY, allowNull: true },
    erase_on: { type: DataTypes.DATEONLY, allowNull: true },
    // The notice for that day (30 days before) and the erasure done on it.
    noticed_for: { type: DataTypes.DATEONLY, allowNull: true },
    noticed_at: { type: DataTypes.DATE, allowNull: true },
    erased_for: { type: DataTypes.DATEONLY, allowNull: true },
    erased_at: { type: DataTypes.DATE, allowNull: true },
    erased_count: { type: DataTypes.INTEGER, allowNull: true },
    // A hold while proceedings are pending (CF art. 14 §10): who placed it, when and on which case.
    held_at: { type: DataTypes.DATE, allowNull: true },
    held_by: { type: DataTypes.INTEGER, allowNull: true, references: { model: 'users', key: 'id' }, onDelete: 'SET NULL' },
    hold_reason: { type: DataTypes.STRING(500), allowNull: true },
    updated_at: { type: DataTypes.DATE, allowNull: false },
  });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.dropTable('contact_retention');
  await queryInterface.removeColumn('contacts', 'consent_evidence');
  await queryInterface.removeColumn('contacts', 'consent_kind');
}
