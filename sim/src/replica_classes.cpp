#include <utility>

#include "pipewright/sim/replica_classes.h"

namespace pipewright {

namespace {

// What decides how fast a replica's pipeline runs on its own.
struct ReplicaShape {
    const std::vector<DeviceSpec>* specs = nullptr;
    std::vector<LinkSpec> links;  // between the ranks of neighbouring stages, both ways

    bool operator==(const ReplicaShape& o) const { return *specs == *o.specs && links == o.links; }
};

ReplicaShape shape_of(const AnalyzedProject& p, std::size_t r, const LinkResolver& resolver) {
    ReplicaShape shape;
    shape.specs = &p.replica_specs[r];
    const auto& devices = p.replicas[r];
    for (std::size_t s = 0; s + 1 < p.stages.size(); ++s) {
        const auto a = static_cast<std::size_t>(p.stages[s].rank);
        const auto b = static_cast<std::size_t>(p.stages[s + 1].rank);
        if (a != b) {
            shape.links.push_back(resolver.between(devices[a], devices[b]).spec);
            shape.links.push_back(resolver.between(devices[b], devices[a]).spec);
        }
    }
    return shape;
}

}  // namespace

ReplicaClasses replica_classes(const AnalyzedProject& project) {
    ReplicaClasses out;
    if (project.data_parallel() <= 1) {
        return {{0}, {0}};  // the pipeline itself, whatever `replicas` holds
    }
    const LinkResolver resolver(project.project.topology);
    std::vector<ReplicaShape> shapes;
    for (std::size_t r = 0; r < project.replicas.size(); ++r) {
        ReplicaShape shape = shape_of(project, r, resolver);
        std::size_t c = 0;
        while (c < shapes.size() && !(shapes[c] == shape)) {
            ++c;
        }
        if (c == shapes.size()) {
            shapes.push_back(std::move(shape));
            out.representative.push_back(static_cast<int>(r));
        }
        out.class_of.push_back(static_cast<int>(c));
    }
    return out;
}

AnalyzedProject as_replica(const AnalyzedProject& project, int r) {
    AnalyzedProject out = project;
    const auto k = static_cast<std::size_t>(r);
    out.ranks = project.replicas.at(k);
    out.rank_specs = project.replica_specs.at(k);
    if (k < project.tensor_groups.size()) {
        // The cost model reads the simulated replica's groups as the first.
        std::swap(out.tensor_groups[0], out.tensor_groups[k]);
    }
    return out;
}

}  // namespace pipewright
