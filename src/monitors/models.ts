/** Sequelize models of the monitor tables (migration 0007). */
import { DataTypes, type Model, type ModelAttributes, type ModelStatic, type Sequelize } from 'sequelize';

export interface MonitorRow {
  id: number;
  entity_id: number;
  name: string;
  name_key: string;
  created_by: number | null;
  created_at: Date;
}

export interface ProfileRow {
  id: number;
  monitor_id: number;
  position: number;
  nm_rede: string;
  username: string | null;
  link: string | null;
}

export interface KeywordRow {
  id: number;
  monitor_id: number;
  position: number;
  keyword: string;
}

export interface SnapshotRow {
  id: number;
  monitor_id: number;
  network: string;
  taken_at: Date;
  /** BIGINT columns: PostgreSQL hands them back as strings, so readers convert them with Number(). */
  followers: number | string;
  posts: number | string;
  engagement: number;
  mentions: number | string;
  source: string;
  received_at: Date;
  /** When the change it came from was made (a webhook's); null when it has no time of its own: taken_at stands for it. */
  changed_at: Date | null;
}

type Static<Row extends object> = ModelStatic<Model<Row, Partial<Row>>>;

export interface MonitorModels {
  Monitor: Static<MonitorRow>;
  Profile: Static<ProfileRow>;
  Keyword: Static<KeywordRow>;
  Snapshot: Static<SnapshotRow>;
}

const id = { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true };

export function defineMonitorModels(sequelize: Sequelize): MonitorModels {
  const define = <Row extends object>(name: string, attributes: ModelAttributes, tableName: string) =>
    sequelize.define<Model<Row, Partial<Row>>>(name, attributes, { tableName, timestamps: false });
  return {
    Monitor: define<MonitorRow>(
      'SocialMonitor',
      { id, entity_id: DataTypes.INTEGER, name: DataTypes.STRING(200), name_key: DataTypes.STRING(800), created_by: DataTypes.INTEGER, created_at: DataTypes.DATE },
      'social_monitors',
    ),
    Profile: define<ProfileRow>(
      'MonitorProfile',
      { id, monitor_id: DataTypes.INTEGER, position: DataTypes.INTEGER, nm_rede: DataTypes.STRING(50), username: DataTypes.STRING(150), link: DataTypes.STRING(2048) },
      'monitor_profiles',
    ),
    Keyword: define<KeywordRow>('MonitorKeyword', { id, monitor_id: DataTypes.INTEGER, position: DataTypes.INTEGER, keyword: DataTypes.STRING(100) }, 'monitor_keywords'),
    Snapshot: define<SnapshotRow>(
      'MetricSnapshot',
      {
        id,
        monitor_id: DataTypes.INTEGER,
        network: DataTypes.STRING(50),
        taken_at: DataTypes.DATE,
        followers: DataTypes.BIGINT,
        posts: DataTypes.BIGINT,
        engagement: DataTypes.DOUBLE,
        mentions: DataTypes.BIGINT,
        source: DataTypes.STRING(50),
        received_at: DataTypes.DATE,
        changed_at: DataTypes.DATE,
      },
      'metric_snapshots',
    ),
  };
}
