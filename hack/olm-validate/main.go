// olm-validate runs operator-framework/api's bundle validators (the code `operator-sdk bundle
// validate` runs) on a registry+v1 bundle folder: `olm-validate BUNDLE_DIR`.
//
// It loads BUNDLE_DIR/manifests with the module's own loader (manifests.GetBundleFromDir), reads
// BUNDLE_DIR/metadata/annotations.yaml into the bundle's package and channels (operator-sdk reads
// them the same way before validating), and runs every validator of the module that applies to a
// bundle: the default ones (ClusterServiceVersion, CustomResourceDefinition, Bundle) and the
// optional ones (OperatorHub, the "operatorframework" suite; Object: PodDisruptionBudgets,
// PriorityClasses, RBAC; Community: APIs removed in Kubernetes 1.22). Any error, and any warning,
// fails (exit 1); the results are printed one a line.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ghodss/yaml"
	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/validation"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: olm-validate BUNDLE_DIR")
		os.Exit(2)
	}
	dir := os.Args[1]
	bundle, err := manifests.GetBundleFromDir(filepath.Join(dir, "manifests"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "olm-validate: loading %s/manifests: %v\n", dir, err)
		os.Exit(1)
	}
	if bundle == nil || bundle.CSV == nil {
		fmt.Fprintf(os.Stderr, "olm-validate: no ClusterServiceVersion in %s/manifests\n", dir)
		os.Exit(1)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "metadata", "annotations.yaml"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "olm-validate: %v\n", err)
		os.Exit(1)
	}
	var meta manifests.AnnotationsFile
	if err := yaml.Unmarshal(raw, &meta); err != nil {
		fmt.Fprintf(os.Stderr, "olm-validate: metadata/annotations.yaml: %v\n", err)
		os.Exit(1)
	}
	a := meta.Annotations
	if a.PackageName == "" || a.Channels == "" {
		fmt.Fprintln(os.Stderr, "olm-validate: metadata/annotations.yaml names no package or no channel")
		os.Exit(1)
	}
	bundle.Package = a.PackageName
	bundle.Channels = strings.Split(a.Channels, ",")
	bundle.DefaultChannel = a.DefaultChannelName

	validators := validation.DefaultBundleValidators.WithValidators(
		validation.OperatorHubValidator,
		validation.ObjectValidator,
		validation.CommunityOperatorValidator,
	)
	objs := append(bundle.ObjectsToValidate(), map[string]string{"k8s-version": os.Getenv("K8S_VERSION")})
	failed := false
	count := 0
	for _, result := range validators.Validate(objs...) {
		for _, e := range result.Errors {
			failed = true
			fmt.Printf("ERROR %s: %s\n", result.Name, e.Error())
		}
		for _, w := range result.Warnings {
			failed = true
			fmt.Printf("WARNING %s: %s\n", result.Name, w.Error())
		}
		count++
	}
	fmt.Printf("olm-validate: %d results from %d validators on %s (package %s, channels %s, %d objects)\n",
		count, len(validators), bundle.CSV.GetName(), bundle.Package, a.Channels, len(bundle.Objects))
	if failed {
		os.Exit(1)
	}
}
