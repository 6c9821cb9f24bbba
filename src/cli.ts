import { NodeRuntime, NodeServices } from "@effect/platform-node"
import { isRefusal } from "./platform/Refusal.ts"
import { Console, Effect, Layer, Option } from "effect"
import { Command, Flag } from "effect/cli"
import * as Admin from "./accounts/admin/Admin.ts"
import { adminOrganization } from "./accounts/admin/Http.ts"
import { AppConfig } from "./platform/AppConfig.ts"
import { toCompanyUser } from "./accounts/companies/Api.ts"
import { configuredStorage } from "./app/Storage.ts"

/**
 * The operator CLI: the admin API's operations, offline, against the
 * configured storage (`DATABASE_URL` or the embedded database in `DATA_DIR`),
 * for a first run before the server is up. `--json` prints machine-readable output.
 */

const json = Flag.Boolean("json").pipe(Flag.withDescription("Print the result as JSON"), Flag.withDefault(false))

const print = (asJson: boolean) => (result: object) =>
  asJson
    ? Console.log(JSON.stringify(result))
    : Console.log(Object.entries(result).map(([key, value]) => `${key}: ${display(value)}`).join("\n"))

const display = (value: unknown) =>
  value instanceof Date ? value.toISOString() : typeof value === "object" ? JSON.stringify(value) : String(value)

const optionalInt = (name: string) => Flag.Int(name).pipe(Flag.optional)

const bootstrap = Command.make("bootstrap", {
  json,
  organization: Flag.String("organization").pipe(Flag.withDefault("Default organization")),
  company: Flag.String("company").pipe(Flag.withDefault("Default company")),
  email: Flag.String("email")
}, (flags) => Effect.flatMap(Admin.bootstrap(flags), print(flags.json))).pipe(
  Command.withDescription("Create an organization, company and owner with a company API key and a personal access key")
)

const createOrg = Command.make("create-org", {
  json,
  name: Flag.String("name"),
  subscriptionType: Flag.String("subscription-type").pipe(Flag.optional),
  creditLimit: optionalInt("credit-limit"),
  dataCreditLimit: optionalInt("data-credit-limit"),
  seats: optionalInt("seats"),
  companyLimit: optionalInt("company-limit")
}, (flags) =>
  Effect.flatMap(
    Admin.createOrganization({
      name: flags.name,
      subscriptionType: Option.getOrUndefined(flags.subscriptionType),
      creditLimit: Option.getOrUndefined(flags.creditLimit),
      dataCreditLimit: Option.getOrUndefined(flags.dataCreditLimit),
      seats: Option.getOrUndefined(flags.seats),
      companyLimit: Option.getOrUndefined(flags.companyLimit)
    }),
    (organization) => print(flags.json)(adminOrganization(organization))
  )).pipe(Command.withDescription("Create an organization"))

const createUser = Command.make("create-user", {
  json,
  email: Flag.String("email"),
  displayName: Flag.String("display-name").pipe(Flag.withDefault(""))
}, (flags) =>
  Effect.flatMap(
    Admin.createUser(flags),
    (user) => print(flags.json)({ id: user.id, email: user.email, displayName: user.displayName })
  )).pipe(Command.withDescription("Create a user"))

const addMember = Command.make("add-member", {
  json,
  org: Flag.String("org"),
  user: Flag.String("user"),
  role: Flag.Literals("role", ["owner", "admin", "member"])
}, (flags) => Effect.flatMap(Admin.addMember(flags.org, flags.user, flags.role), print(flags.json))).pipe(
  Command.withDescription("Add a user to an organization with a role")
)

/** The two ownership commands differ only in the action: both name an organization and a user. */
const ownershipCommand = (
  name: string,
  description: string,
  change: typeof Admin.setOwner
) =>
  Command.make(name, { json, org: Flag.String("org"), user: Flag.String("user") }, (flags) =>
    Effect.flatMap(change(flags.org, flags.user), (organization) => print(flags.json)(adminOrganization(organization))))
    .pipe(Command.withDescription(description))

const setOwner = ownershipCommand("set-owner", "Make a user the organization's owner user", Admin.setOwner)

const addOwner = ownershipCommand("add-owner", "Add a user to the organization's owners list", Admin.addOwner)

const createCompany = Command.make("create-company", { json, org: Flag.String("org"), name: Flag.String("name") }, (flags) =>
  Effect.flatMap(
    Admin.createCompany(flags.org, flags.name),
    (company) => print(flags.json)({ id: company.id, name: company.name, organizationId: company.organizationId })
  )).pipe(Command.withDescription("Create a company in an organization"))

const addCompanyUser = Command.make("add-company-user", {
  json,
  company: Flag.String("company"),
  user: Flag.String("user"),
  role: Flag.Literals("role", ["owner", "admin", "member", "viewer"]),
  features: Flag.String("features").pipe(Flag.withDescription("Comma-separated allowed features"), Flag.withDefault(""))
}, (flags) =>
  Effect.flatMap(
    Admin.addCompanyUser(flags.company, {
      userId: flags.user,
      role: flags.role,
      allowedFeatures: flags.features.split(",").map((feature) => feature.trim()).filter((feature) => feature !== "")
    }),
    (companyUser) => print(flags.json)(toCompanyUser(companyUser))
  )).pipe(Command.withDescription("Add a user to a company with a role"))

const createPak = Command.make("create-pak", {
  json,
  user: Flag.String("user"),
  name: Flag.String("name"),
  expiresAt: Flag.Date("expires-at").pipe(Flag.optional)
}, (flags) =>
  Effect.flatMap(
    Admin.createPersonalKey(flags.user, {
      name: flags.name,
      expiresAt: Option.getOrUndefined(flags.expiresAt)
    }),
    print(flags.json)
  )).pipe(Command.withDescription("Create a personal access key for a user (shown once)"))

const cli = Command.make("platform-api").pipe(
  Command.withDescription("Platform API operator commands"),
  Command.withSubcommands([bootstrap, createOrg, createUser, addMember, setOwner, addOwner, createCompany, addCompanyUser, createPak])
)

const storage = configuredStorage.pipe(Layer.provide(AppConfig.layer))

Command.run(cli, { version: "1.0.0" }).pipe(
  Effect.catchIf(isRefusal, (error) => Effect.andThen(Console.error(`error: ${error.message}`), Effect.fail(error))),
  Effect.provide(Layer.mergeAll(storage, NodeServices.layer)),
  NodeRuntime.runMain({ disableErrorReporting: true })
)
