import { Sequelize } from 'sequelize';
import { Plan } from './Plan';
import { Organization } from './Organization';
import { User } from './User';
import { Membership } from './Membership';
import { Project } from './Project';
import { ApiKey } from './ApiKey';
import { RoutingPlan } from './RoutingPlan';
import { Provider } from './Provider';
import { Model } from './Model';
import { UsageEvent } from './UsageEvent';
import { StoredResponse } from './StoredResponse';
import { Wallet } from './Wallet';
import { CreditReservation } from './CreditReservation';
import { Image } from './Image';

export { Plan, Organization, User, Membership, Project, ApiKey, RoutingPlan, Provider, Model, UsageEvent, StoredResponse, Wallet, CreditReservation };
export { Image };

/** Later issues add their models here; each model file exports an `init` that defines its table. */
export function initModels(sequelize: Sequelize): void {
  Plan.initModel(sequelize);
  Organization.initModel(sequelize);
  User.initModel(sequelize);
  Membership.initModel(sequelize);
  Project.initModel(sequelize);
  ApiKey.initModel(sequelize);
  RoutingPlan.initModel(sequelize);
  Provider.initModel(sequelize);
  Model.initModel(sequelize);
  UsageEvent.initModel(sequelize);
  StoredResponse.initModel(sequelize);
  Wallet.initModel(sequelize);
  CreditReservation.initModel(sequelize);
  Image.initModel(sequelize);
}
