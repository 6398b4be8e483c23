// From ChangeBatches.md; UIKit, so compiled on Apple platforms only.
#if canImport(UIKit)
extension NotesCollectionAdapter: @preconcurrency Coordinatable {
    func reload(_ snapshot: ResultsSnapshot<Note, Notebook>) {
        self.snapshot = snapshot
        collectionView.reloadData()
    }

    func apply(_ batch: ChangeBatch, snapshot: ResultsSnapshot<Note, Notebook>) {
        let old = self.snapshot
        collectionView.performBatchUpdates { [self] in
            self.snapshot = snapshot
            collectionView.deleteSections(IndexSet(batch.sectionDeletes))
            collectionView.insertSections(IndexSet(batch.sectionInserts))
            for move in batch.sectionMoves { collectionView.moveSection(move.from, toSection: move.to) }
            collectionView.deleteItems(at: batch.itemDeletes.map(IndexPath.init))
            collectionView.insertItems(at: batch.itemInserts.map(IndexPath.init))
            for move in batch.itemMoves { collectionView.moveItem(at: IndexPath(move.from), to: IndexPath(move.to)) }
            collectionView.reloadItems(at: batch.itemUpdates.map(IndexPath.init))
        } completion: { [self] _ in
            let updated = batch.sectionUpdates.compactMap { snapshot.index(ofSection: old.sections[$0].id) }
            for section in updated + batch.movedAndUpdatedSections {
                let header = collectionView.supplementaryView(
                    forElementKind: UICollectionView.elementKindSectionHeader, at: IndexPath(item: 0, section: section))
                (header as? NotebookHeaderView)?.title = title(ofSection: section)
            }
            collectionView.reconfigureItems(at: batch.movedAndUpdatedItems.map(IndexPath.init))  // iOS 15
        }
    }
}
#endif
