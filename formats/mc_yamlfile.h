/*
 * mc_yamlfile.h - a job's YAML file (an Accelerate config, a torchtune
 * recipe) as the same jansson tree a JSON file gives, so that one reader
 * of keys serves both. Read with libyaml (Debian libyaml-dev), the parser
 * PyYAML itself wraps; scalars are typed as YAML 1.1's resolver does for
 * plain (unquoted) scalars, which is what Accelerate (yaml.safe_load) and
 * torchtune (OmegaConf, on yaml) read:
 *   true/false, yes/no, on/off in any of their three cases -> boolean
 *   null, Null, NULL, ~ and an empty plain scalar          -> null
 *   [-+]digits                                             -> integer
 *   [-+]digits.digits[e[-+]digits], digitse[-+]digits      -> real
 *   anything else, and every quoted scalar                 -> string
 * Only the first document is read. Anchors, aliases and merge keys are
 * refused (no file these tools publish uses one; an alias could expand a
 * small file without bound). A key given twice in one mapping is refused,
 * as the YAML spec says keys are unique.
 */
#ifndef MC_YAMLFILE_H
#define MC_YAMLFILE_H

#include <stddef.h>

/*
 * Parse text (len bytes) into a new jansson value: a mapping becomes an
 * object, a sequence an array. Returns NULL with err = "NAME: not YAML at
 * line L, column C: <libyaml's reason>", "NAME: line L: an alias or
 * anchor (not read)", "NAME: line L: key \"k\" given twice", "NAME: empty
 * file" (L and C from 1). name says which option and file. The caller
 * json_decref()s.
 */
struct json_t;
struct json_t *mc_yamlfile_parse(const char *text, size_t len,
				 const char *name, char *err, size_t errlen);

#endif
