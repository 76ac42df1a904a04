import type { QueryInterface } from 'sequelize';

/**
 * How many entities of each type every user is a member of, kept by the database itself (issue 20).
 *
 * The entity list answers with the caller's total. Counting the membership index for it cost a team of
 * 100,000 entities a walk of 100,000 index entries on every page (docs/benchmarks.md, cost against
 * size). Triggers keep `entity_member_counts` right whoever changes a membership: a handler, a user's
 * deletion (its cascade), a script. An entity's deletion first removes its members (a BEFORE trigger),
 * so that each removal still finds the entity's type to count it out.
 */
export const name = '0019-member-counts';

/** The same on both databases. */
const COUNTS_TABLE = `CREATE TABLE entity_member_counts (
  user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  tp VARCHAR(20) NOT NULL,
  total INTEGER NOT NULL,
  PRIMARY KEY (user_id, tp)
)`;

/** The statements both databases' triggers run: a membership counted in or out, an entity's members moved between types. */
const COUNT_IN = (user: string, entity: string) => `INSERT INTO entity_member_counts (user_id, tp, total) SELECT ${user}, tp, 1 FROM entities WHERE id = ${entity}
       ON CONFLICT (user_id, tp) DO UPDATE SET total = entity_member_counts.total + 1`;
const COUNT_OUT = (user: string, entity: string) => `UPDATE entity_member_counts SET total = total - 1
       WHERE user_id = ${user} AND tp = (SELECT tp FROM entities WHERE id = ${entity})`;
const RECOUNT_TYPE = `UPDATE entity_member_counts SET total = total - 1
       WHERE tp = OLD.tp AND user_id IN (SELECT user_id FROM entity_members WHERE entity_id = NEW.id);
     INSERT INTO entity_member_counts (user_id, tp, total) SELECT user_id, NEW.tp, 1 FROM entity_members WHERE entity_id = NEW.id
       ON CONFLICT (user_id, tp) DO UPDATE SET total = entity_member_counts.total + 1`;
const MEMBERS_LEAVE = 'DELETE FROM entity_members WHERE entity_id = OLD.id';

const SQLITE_UP = [
  COUNTS_TABLE,
  `CREATE TRIGGER entity_members_counted_in AFTER INSERT ON entity_members BEGIN ${COUNT_IN('NEW.user_id', 'NEW.entity_id')}; END`,
  `CREATE TRIGGER entity_members_counted_out AFTER DELETE ON entity_members BEGIN ${COUNT_OUT('OLD.user_id', 'OLD.entity_id')}; END`,
  `CREATE TRIGGER entity_members_counted_moved AFTER UPDATE OF user_id, entity_id ON entity_members BEGIN
     ${COUNT_OUT('OLD.user_id', 'OLD.entity_id')};
     ${COUNT_IN('NEW.user_id', 'NEW.entity_id')};
   END`,
  `CREATE TRIGGER entities_members_leave_first BEFORE DELETE ON entities BEGIN ${MEMBERS_LEAVE}; END`,
  `CREATE TRIGGER entities_type_recounted AFTER UPDATE OF tp ON entities WHEN OLD.tp <> NEW.tp BEGIN ${RECOUNT_TYPE}; END`,
];

// PostgreSQL: the same statements, in trigger functions.
const POSTGRES_UP = [
  COUNTS_TABLE,
  `CREATE FUNCTION entity_member_counts_follow() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     IF TG_OP IN ('DELETE', 'UPDATE') THEN ${COUNT_OUT('OLD.user_id', 'OLD.entity_id')}; END IF;
     IF TG_OP IN ('INSERT', 'UPDATE') THEN ${COUNT_IN('NEW.user_id', 'NEW.entity_id')}; END IF;
     RETURN NULL;
   END $$`,
  `CREATE TRIGGER entity_members_counted AFTER INSERT OR DELETE OR UPDATE OF user_id, entity_id ON entity_members
     FOR EACH ROW EXECUTE FUNCTION entity_member_counts_follow()`,
  `CREATE FUNCTION entities_members_leave_first() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ${MEMBERS_LEAVE}; RETURN OLD; END $$`,
  `CREATE TRIGGER entities_members_leave_first BEFORE DELETE ON entities FOR EACH ROW EXECUTE FUNCTION entities_members_leave_first()`,
  `CREATE FUNCTION entities_type_recounted() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ${RECOUNT_TYPE}; RETURN NULL; END $$`,
  `CREATE TRIGGER entities_type_recounted AFTER UPDATE OF tp ON entities FOR EACH ROW WHEN (OLD.tp <> NEW.tp) EXECUTE FUNCTION entities_type_recounted()`,
];

/** The memberships there already are, counted once. */
const BACKFILL = `INSERT INTO entity_member_counts (user_id, tp, total)
  SELECT m.user_id, e.tp, COUNT(*) FROM entity_members m JOIN entities e ON e.id = m.entity_id GROUP BY m.user_id, e.tp`;

export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  const statements = queryInterface.sequelize.getDialect() === 'postgres' ? POSTGRES_UP : SQLITE_UP;
  for (const statement of [...statements, BACKFILL]) await queryInterface.sequelize.query(statement);
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  const postgres = queryInterface.sequelize.getDialect() === 'postgres';
  const triggers = postgres
    ? ['entity_members_counted ON entity_members', 'entities_members_leave_first ON entities', 'entities_type_recounted ON entities']
    : ['entity_members_counted_in', 'entity_members_counted_out', 'entity_members_counted_moved', 'entities_members_leave_first', 'entities_type_recounted'];
  for (const trigger of triggers) await queryInterface.sequelize.query(`DROP TRIGGER IF EXISTS ${trigger}`);
  if (postgres) {
    for (const fn of ['entity_member_counts_follow', 'entities_members_leave_first', 'entities_type_recounted']) await queryInterface.sequelize.query(`DROP FUNCTION IF EXISTS ${fn}()`);
  }
  await queryInterface.dropTable('entity_member_counts');
}
