// The OpenAPI v2 document as kubectl downloads it: gnostic's openapi.v2.Document protobuf
// (github.com/google/gnostic-models openapiv2/OpenAPIv2.proto, in proto/k8s), with vendor
// extensions as YAML text the way gnostic stores them (kubectl reads
// `x-kubernetes-group-version-kind` from there to find a kind's schema).
import { create, toBinary, type MessageInitShape } from '@bufbuild/protobuf';
import { stringify as toYaml } from 'yaml';
import {
  DocumentSchema,
  type NamedAnySchema,
  type OperationSchema,
  type ParametersItemSchema,
  type SchemaSchema,
} from '../protobuf/gen/github.com/google/gnostic-models/openapiv2/OpenAPIv2_pb.js';
import { isObject, type JsonObject } from '../json.ts';

type SchemaInit = MessageInitShape<typeof SchemaSchema>;
type NamedAnyInit = MessageInitShape<typeof NamedAnySchema>;

function extensions(value: JsonObject): NamedAnyInit[] {
  return Object.entries(value)
    .filter(([key]) => key.startsWith('x-'))
    .map(([name, item]) => ({ name, value: { yaml: toYaml(item) } }));
}

function schema(value: JsonObject): SchemaInit {
  const init: SchemaInit = {
    vendorExtension: extensions(value),
  };
  if (typeof value.$ref === 'string') init.Ref = value.$ref;
  if (typeof value.format === 'string') init.format = value.format;
  if (typeof value.description === 'string') init.description = value.description;
  if (typeof value.type === 'string') init.type = { value: [value.type] };
  if (Array.isArray(value.required)) init.required = value.required.map(String);
  if (isObject(value.items)) init.items = { schema: [schema(value.items)] };
  if (Array.isArray(value.allOf)) init.allOf = value.allOf.filter(isObject).map(schema);
  if (isObject(value.properties)) {
    init.properties = {
      additionalProperties: Object.entries(value.properties)
        .filter((entry): entry is [string, JsonObject] => isObject(entry[1]))
        .map(([name, item]) => ({ name, value: schema(item) })),
    };
  }
  if (isObject(value.additionalProperties)) {
    init.additionalProperties = {
      oneof: { case: 'schema', value: schema(value.additionalProperties) },
    };
  }
  return init;
}

function parameter(value: JsonObject): MessageInitShape<typeof ParametersItemSchema> {
  if (value.in === 'body') {
    return {
      oneof: {
        case: 'parameter',
        value: {
          oneof: {
            case: 'bodyParameter',
            value: {
              name: String(value.name),
              in: 'body',
              required: value.required === true,
              ...(isObject(value.schema) ? { schema: schema(value.schema) } : {}),
            },
          },
        },
      },
    };
  }
  return {
    oneof: {
      case: 'parameter',
      value: {
        oneof: {
          case: 'nonBodyParameter',
          value: {
            oneof: {
              case: 'queryParameterSubSchema',
              value: {
                name: String(value.name),
                in: 'query',
                type: typeof value.type === 'string' ? value.type : 'string',
                uniqueItems: value.uniqueItems === true,
              },
            },
          },
        },
      },
    },
  };
}

function operation(value: JsonObject): MessageInitShape<typeof OperationSchema> {
  const responses = isObject(value.responses) ? value.responses : {};
  return {
    operationId: typeof value.operationId === 'string' ? value.operationId : '',
    parameters: Array.isArray(value.parameters)
      ? value.parameters.filter(isObject).map(parameter)
      : [],
    responses: {
      responseCode: Object.entries(responses)
        .filter((entry): entry is [string, JsonObject] => isObject(entry[1]))
        .map(([code, response]) => ({
          name: code,
          value: {
            oneof: {
              case: 'response',
              value: {
                description: typeof response.description === 'string' ? response.description : '',
                ...(isObject(response.schema)
                  ? { schema: { oneof: { case: 'schema', value: schema(response.schema) } } }
                  : {}),
              },
            },
          },
        })),
    },
    vendorExtension: extensions(value),
  };
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

/** The gnostic protobuf bytes of a swagger 2.0 JSON document. */
export function encodeOpenApiV2(document: JsonObject): Uint8Array {
  const info = isObject(document.info) ? document.info : {};
  const paths = isObject(document.paths) ? document.paths : {};
  const definitions = isObject(document.definitions) ? document.definitions : {};
  const message = create(DocumentSchema, {
    swagger: String(document.swagger),
    info: { title: String(info.title), version: String(info.version) },
    paths: {
      path: Object.entries(paths)
        .filter((entry): entry is [string, JsonObject] => isObject(entry[1]))
        .map(([name, item]) => {
          const value: Record<string, unknown> = {};
          for (const method of METHODS) {
            const op = item[method];
            if (isObject(op)) value[method] = operation(op);
          }
          return { name, value };
        }),
    },
    definitions: {
      additionalProperties: Object.entries(definitions)
        .filter((entry): entry is [string, JsonObject] => isObject(entry[1]))
        .map(([name, item]) => ({ name, value: schema(item) })),
    },
  });
  return toBinary(DocumentSchema, message);
}
