import { refusal } from "../../platform/Refusal.ts"

/** No department with this id in the caller's company. */
export class DepartmentNotFound extends refusal(
  "NotFound",
  "DepartmentNotFound",
  ({ id }: { readonly id: string }) => `Department ${id} not found`
) {}

/** A `departmentId` in a body that names no department of the caller's company. */
export class UnknownDepartment extends refusal(
  "Invalid",
  "UnknownDepartment",
  ({ id }: { readonly id: string }) => `departmentId: no department ${id} in this company`
) {}
