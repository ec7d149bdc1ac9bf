// Query parameters parsed as the apiserver parses them: ParameterCodec.DecodeParameters into
// ListOptions/CreateOptions/… with apimachinery's string conversions
// (k8s.io/apimachinery/pkg/runtime/conversion.go, v0.32.4): a boolean is false only for "0"
// and any case of "false" (every other value, the empty one included, is true; line 83); an
// integer is strconv.ParseInt(s, 10, 64), and a failure is 400 BadRequest with Go's error text
// (handlers/get.go:194, ListResource). Then the options' validation
// (apimachinery pkg/apis/meta/v1/validation/validation.go): 422 Invalid on `dryRun` values
// other than All and unknown `fieldValidation` values.
import { ApiError, badRequest, type StatusCause } from '../status-errors.ts';
import type { FieldValidation } from '../admission/field-validation.ts';

/** A boolean parameter: absent → undefined, else apimachinery's Convert_Slice_string_To_bool. */
export function boolParam(query: URLSearchParams, name: string): boolean | undefined {
  const value = query.get(name);
  if (value === null) return undefined;
  return !(value === '0' || value.toLowerCase() === 'false');
}

/** `boolParam` with absent meaning false. */
export function flagParam(query: URLSearchParams, name: string): boolean {
  return boolParam(query, name) ?? false;
}

const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

/** Go's strconv.ParseInt(value, 10, 64), or the error text it gives. */
export function parseGoInt(value: string): number | string {
  const quoted = JSON.stringify(value);
  if (!/^[+-]?\d+$/.test(value)) return `strconv.ParseInt: parsing ${quoted}: invalid syntax`;
  const big = BigInt(value);
  if (big > INT64_MAX || big < INT64_MIN)
    return `strconv.ParseInt: parsing ${quoted}: value out of range`;
  return Number(big);
}

/** An integer parameter: absent → undefined; unparsable (the empty value too) → 400. */
export function intParam(query: URLSearchParams, name: string): number | undefined {
  const value = query.get(name);
  if (value === null) return undefined;
  const parsed = parseGoInt(value);
  if (typeof parsed === 'string') throw badRequest(parsed);
  return parsed;
}

/** The option kinds whose validation names them in the 422 (`CreateOptions.meta.k8s.io`). */
export type OptionsKind = 'CreateOptions' | 'UpdateOptions' | 'PatchOptions' | 'DeleteOptions';

function invalidOptions(kind: OptionsKind, causes: StatusCause[]): ApiError {
  const summary = causes.map((cause) => `${cause.field}: ${cause.message}`);
  return new ApiError({
    code: 422,
    reason: 'Invalid',
    message: `${kind}.meta.k8s.io "" is invalid: ${summary.length === 1 ? summary[0] : `[${summary.join(', ')}]`}`,
    details: { group: 'meta.k8s.io', kind, causes },
  });
}

/** Go's %#v of a []string, as field.NotSupported prints it. */
function goStrings(values: readonly string[]): string {
  return `[]string{${values.map((value) => JSON.stringify(value)).join(', ')}}`;
}

export interface WriteParams {
  dryRun: boolean;
  fieldManager: string | undefined;
  /** '' when not given: the handler's default applies (Strict for kubectl's writes, else Warn). */
  fieldValidation: FieldValidation | '';
  force: boolean | undefined;
}

/** The write options of a create, update, patch or delete, validated as the apiserver does. */
export function writeParams(query: URLSearchParams, kind: OptionsKind): WriteParams {
  const causes: StatusCause[] = [];
  const dryRun = query.getAll('dryRun');
  if (!dryRun.every((value) => value === 'All')) {
    causes.push({
      reason: 'FieldValueNotSupported',
      field: 'dryRun',
      message: `Unsupported value: ${goStrings(dryRun)}: supported values: "All"`,
    });
  }
  const fieldValidation = query.get('fieldValidation') ?? '';
  if (kind !== 'DeleteOptions' && !['', 'Ignore', 'Warn', 'Strict'].includes(fieldValidation)) {
    causes.push({
      reason: 'FieldValueNotSupported',
      field: 'fieldValidation',
      message: `Unsupported value: ${JSON.stringify(fieldValidation)}: supported values: "", "Ignore", "Strict", "Warn"`,
    });
  }
  const force = boolParam(query, 'force');
  if (causes.length > 0) throw invalidOptions(kind, causes);
  return {
    dryRun: dryRun.length > 0,
    fieldManager: query.get('fieldManager') ?? undefined,
    fieldValidation: fieldValidation as FieldValidation | '',
    force,
  };
}

/** PatchOptions validation: `force` only for apply patches; apply needs a fieldManager. */
export function validatePatchParams(params: WriteParams, isApply: boolean): void {
  if (isApply) {
    if (params.fieldManager === undefined || params.fieldManager === '') {
      throw invalidOptions('PatchOptions', [
        {
          reason: 'FieldValueRequired',
          field: 'fieldManager',
          message: 'Required value: is required for apply patch',
        },
      ]);
    }
  } else if (params.force !== undefined) {
    throw invalidOptions('PatchOptions', [
      {
        reason: 'FieldValueForbidden',
        field: 'force',
        message: 'Forbidden: may not be specified for non-apply patch',
      },
    ]);
  }
}
