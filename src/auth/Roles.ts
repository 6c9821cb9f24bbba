/** A person's role in a company; a company key acts as `admin`. */
export type CompanyRole = "owner" | "admin" | "member" | "viewer"

/** A person's role in an organization. */
export type OrgRole = "owner" | "admin" | "member"
