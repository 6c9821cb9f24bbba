/** A person's role in a company; a company key has the role of the user who created it. */
export type CompanyRole = "owner" | "admin" | "member" | "viewer"

/** A person's role in an organization. */
export type OrgRole = "owner" | "admin" | "member"
