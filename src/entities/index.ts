/** The entities domain, assembled from a database: models, the team rules, the entity store and the guardianship links. */
import type { Sequelize } from 'sequelize';
import { GuardianshipLinks } from './guardianship.js';
import { defineEntityModels, type EntityModels } from './models.js';
import { EntityStore } from './store.js';
import { Teams } from './teams.js';

export interface Entities {
  models: EntityModels;
  teams: Teams;
  store: EntityStore;
  guardianship: GuardianshipLinks;
}

export function createEntities(sequelize: Sequelize): Entities {
  const models = defineEntityModels(sequelize);
  return { models, teams: new Teams(models), store: new EntityStore(models), guardianship: new GuardianshipLinks(models) };
}
